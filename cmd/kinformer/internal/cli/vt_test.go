package cli

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// vt is a small virtual terminal for tests: it interprets the bytes a
// program writes the way xterm does, for the sequences kinformer emits,
// and keeps the screen a person would see. It fails loudly (unknown) on
// any other escape sequence, so a test cannot pass by emitting something
// it does not understand.
//
// Modelled: printable runes, one column each; auto-wrap at the right margin
// with xterm's deferred wrap (writing the last column sets a pending wrap
// that the next printable rune carries out); scrolling at the bottom;
// CR, LF (as the tty's onlcr turns it into CR LF), BS; CSI n A/B/C/D
// (cursor moves), CSI r;c H and f (position), CSI n J and K (erase), CSI
// ...m (attributes, ignored), CSI ?25h/l (cursor visibility, ignored),
// CSI ?1049h/l (the alternate screen, with the cursor saved and restored).
//
// It is an io.Writer, safe for concurrent use.
type vt struct {
	mu            sync.Mutex
	width, height int
	main, alt     [][]rune
	// screen is main or alt, whichever is shown.
	screen   [][]rune
	row, col int
	// wrapNext: the last column was written; the next printable rune
	// goes to the start of the next line.
	wrapNext bool
	// wraps counts automatic wraps (a line longer than the screen).
	wraps     int
	savedRow  int
	savedCol  int
	pending   []byte
	unknown   []string
	altActive bool
}

func newVT(width, height int) *vt {
	t := &vt{width: width, height: height}
	t.main = blankScreen(width, height)
	t.alt = blankScreen(width, height)
	t.screen = t.main
	return t
}

func blankScreen(w, h int) [][]rune {
	s := make([][]rune, h)
	for i := range s {
		s[i] = blankLine(w)
	}
	return s
}

func blankLine(w int) []rune {
	l := make([]rune, w)
	for i := range l {
		l[i] = ' '
	}
	return l
}

func (t *vt) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	data := append(t.pending, p...)
	t.pending = nil
	for len(data) > 0 {
		if data[0] == 0x1b {
			n, ok := t.escape(data)
			if !ok { // incomplete: wait for the rest
				t.pending = append([]byte(nil), data...)
				break
			}
			data = data[n:]
			continue
		}
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && !utf8.FullRune(data) {
			t.pending = append([]byte(nil), data...)
			break
		}
		data = data[size:]
		t.rune(r)
	}
	return len(p), nil
}

func (t *vt) rune(r rune) {
	switch r {
	case '\r':
		t.col, t.wrapNext = 0, false
	case '\n':
		t.col, t.wrapNext = 0, false
		t.lineFeed()
	case '\b':
		if t.col > 0 {
			t.col--
		}
		t.wrapNext = false
	case '\t':
		t.col = min(t.width-1, (t.col/8+1)*8)
	default:
		if r < 0x20 {
			t.unknown = append(t.unknown, fmt.Sprintf("control %#x", r))
			return
		}
		if t.wrapNext {
			t.wraps++
			t.col, t.wrapNext = 0, false
			t.lineFeed()
		}
		t.screen[t.row][t.col] = r
		if t.col == t.width-1 {
			t.wrapNext = true
		} else {
			t.col++
		}
	}
}

func (t *vt) lineFeed() {
	if t.row < t.height-1 {
		t.row++
		return
	}
	copy(t.screen, t.screen[1:])
	t.screen[t.height-1] = blankLine(t.width)
}

// escape interprets the sequence at the start of data and returns its
// length; ok is false when data ends inside it.
func (t *vt) escape(data []byte) (n int, ok bool) {
	if len(data) < 2 {
		return 0, false
	}
	if data[1] != '[' {
		t.unknown = append(t.unknown, fmt.Sprintf("ESC %q", data[1]))
		return 2, true
	}
	end := 2
	for end < len(data) && (data[end] < 0x40 || data[end] > 0x7e) {
		end++
	}
	if end == len(data) {
		return 0, false
	}
	params, final := string(data[2:end]), data[end]
	n = end + 1
	private := strings.HasPrefix(params, "?")
	params = strings.TrimPrefix(params, "?")
	var args []int
	if params != "" {
		for _, p := range strings.Split(params, ";") {
			v, err := strconv.Atoi(p)
			if err != nil {
				t.unknown = append(t.unknown, fmt.Sprintf("CSI %q%c", params, final))
				return n, true
			}
			args = append(args, v)
		}
	}
	arg := func(i, def int) int {
		if i < len(args) && args[i] > 0 {
			return args[i]
		}
		return def
	}
	if private {
		switch {
		case (final == 'h' || final == 'l') && arg(0, 0) == 25:
		case final == 'h' && arg(0, 0) == 1049:
			if !t.altActive {
				t.savedRow, t.savedCol = t.row, t.col
				t.alt = blankScreen(t.width, t.height)
				t.screen, t.altActive = t.alt, true
			}
		case final == 'l' && arg(0, 0) == 1049:
			if t.altActive {
				t.screen, t.altActive = t.main, false
				t.row, t.col = t.savedRow, t.savedCol
			}
		default:
			t.unknown = append(t.unknown, fmt.Sprintf("CSI ?%s%c", params, final))
		}
		t.wrapNext = false
		return n, true
	}
	switch final {
	case 'A':
		t.row = max(0, t.row-arg(0, 1))
	case 'B':
		t.row = min(t.height-1, t.row+arg(0, 1))
	case 'C':
		t.col = min(t.width-1, t.col+arg(0, 1))
	case 'D':
		t.col = max(0, t.col-arg(0, 1))
	case 'H', 'f':
		t.row = min(t.height, arg(0, 1)) - 1
		t.col = min(t.width, arg(1, 1)) - 1
	case 'K':
		line := t.screen[t.row]
		from, to := t.col, t.width
		switch arg(0, 0) {
		case 1:
			from, to = 0, t.col+1
		case 2:
			from = 0
		}
		for i := from; i < to; i++ {
			line[i] = ' '
		}
	case 'J':
		switch arg(0, 0) {
		case 0:
			for i := t.col; i < t.width; i++ {
				t.screen[t.row][i] = ' '
			}
			for r := t.row + 1; r < t.height; r++ {
				t.screen[r] = blankLine(t.width)
			}
		case 1:
			for r := 0; r < t.row; r++ {
				t.screen[r] = blankLine(t.width)
			}
			for i := 0; i <= t.col; i++ {
				t.screen[t.row][i] = ' '
			}
		case 2, 3:
			for r := range t.screen {
				t.screen[r] = blankLine(t.width)
			}
		}
	case 'm':
	default:
		t.unknown = append(t.unknown, fmt.Sprintf("CSI %s%c", params, final))
	}
	t.wrapNext = false
	return n, true
}

// lines returns the screen shown, one string per row, trailing spaces cut.
func (t *vt) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, t.height)
	for i, l := range t.screen {
		out[i] = strings.TrimRight(string(l), " ")
	}
	return out
}

// text is the screen shown as one string, without trailing blank rows.
func (t *vt) text() string {
	return strings.TrimRight(strings.Join(t.lines(), "\n"), "\n")
}

// problems lists the escape sequences and control characters vt did not
// understand.
func (t *vt) problems() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.unknown...)
}

// wrapCount is the number of automatic wraps so far.
func (t *vt) wrapCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wraps
}
