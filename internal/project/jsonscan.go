package project

import (
	"unicode/utf16"
	"unicode/utf8"
)

// A small JSON scanner over a byte slice: enough to walk objects and
// arrays, read strings and numbers, and skip any value without
// allocating. Positions are indexes into the input.

// maxNesting bounds how deep skipValue descends.
const maxNesting = 10000

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

func jsonErr(b []byte, i int, what string) error {
	return malformed("JSON at offset %d: %s", i, what)
}

// scanString reads the string starting at b[i] == '"'. It returns its raw
// content (between the quotes), whether it holds escapes, and the index
// after the closing quote.
func scanString(b []byte, i int) (content []byte, escaped bool, end int, err error) {
	if i >= len(b) || b[i] != '"' {
		return nil, false, 0, jsonErr(b, i, "want a string")
	}
	start := i + 1
	for j := start; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[start:j], escaped, j + 1, nil
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			return nil, false, 0, jsonErr(b, j, "control character in string")
		}
	}
	return nil, false, 0, jsonErr(b, i, "unterminated string")
}

// unescape appends the decoded form of s, a string's raw content, to dst.
func unescape(dst, s []byte) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		if i >= len(s) {
			return nil, malformed("JSON: bad escape")
		}
		switch s[i] {
		case '"', '\\', '/':
			dst = append(dst, s[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s, i+1)
			if !ok {
				return nil, malformed("JSON: bad \\u escape")
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(s, i+3); ok && i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 6
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return nil, malformed("JSON: bad escape")
		}
	}
	return dst, nil
}

func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// scanNumber returns the end of the number starting at b[i].
func scanNumber(b []byte, i int) (int, error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if digits() == 0 {
		return 0, jsonErr(b, start, "bad number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0, jsonErr(b, start, "bad number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, jsonErr(b, start, "bad number")
		}
	}
	return i, nil
}

// literal checks that b[i:] starts with lit and returns its end.
func literal(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, jsonErr(b, i, "bad literal")
	}
	return i + len(lit), nil
}

// skipValue returns the end of the value starting at b[i] (no leading
// space).
func skipValue(b []byte, i int) (int, error) { return skipNested(b, i, 0) }

func skipNested(b []byte, i, depth int) (int, error) {
	if depth > maxNesting {
		return 0, jsonErr(b, i, "nested too deep")
	}
	if i >= len(b) {
		return 0, jsonErr(b, i, "unexpected end")
	}
	switch c := b[i]; {
	case c == '"':
		_, _, end, err := scanString(b, i)
		return end, err
	case c == '{' || c == '[':
		return walk(b, i, c, func(_ []byte, _ bool, v int) (int, error) {
			return skipNested(b, v, depth+1)
		})
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	}
	return 0, jsonErr(b, i, "unexpected character")
}

// walk walks the object (open '{') or the array (open '[') starting at
// b[i], calling fn with the start of each value and, in an object, its
// member's raw key and whether the key holds escapes; fn returns the
// value's end. walk returns the container's end.
func walk(b []byte, i int, open byte, fn func(key []byte, escaped bool, v int) (int, error)) (int, error) {
	closer, want := byte('}'), "want an object"
	if open == '[' {
		closer, want = ']', "want an array"
	}
	if i >= len(b) || b[i] != open {
		return 0, jsonErr(b, i, want)
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, nil
	}
	for {
		var key []byte
		var esc bool
		if open == '{' {
			k, e, end, err := scanString(b, i)
			if err != nil {
				return 0, err
			}
			i = skipWS(b, end)
			if i >= len(b) || b[i] != ':' {
				return 0, jsonErr(b, i, "want ':'")
			}
			i = skipWS(b, i+1)
			key, esc = k, e
		}
		if i >= len(b) {
			return 0, jsonErr(b, i, "unexpected end")
		}
		end, err := fn(key, esc, i)
		if err != nil {
			return 0, err
		}
		i = skipWS(b, end)
		if i >= len(b) {
			return 0, jsonErr(b, i, "unexpected end")
		}
		if b[i] == closer {
			return i + 1, nil
		}
		if b[i] != ',' {
			return 0, jsonErr(b, i, "want ',' or '"+string(closer)+"'")
		}
		i = skipWS(b, i+1)
	}
}

// members walks the object starting at b[i] == '{' (see walk).
func members(b []byte, i int, fn func(key []byte, escaped bool, v int) (int, error)) (int, error) {
	return walk(b, i, '{', fn)
}

// elements walks the array starting at b[i] == '[', calling fn with the
// start of each element; fn returns its end. elements returns the
// array's end.
func elements(b []byte, i int, fn func(v int) (int, error)) (int, error) {
	return walk(b, i, '[', func(_ []byte, _ bool, v int) (int, error) { return fn(v) })
}

// countItems returns how many elements the array, or members the object,
// at b[i] holds.
func countItems(b []byte, i int) int {
	n := 0
	skip := func(v int) (int, error) { n++; return skipValue(b, v) }
	if i < len(b) && b[i] == '{' {
		_, _ = members(b, i, func(_ []byte, _ bool, v int) (int, error) { return skip(v) })
	} else {
		_, _ = elements(b, i, skip)
	}
	return n
}

// JSONMembers calls fn with each member of the JSON object data: its key
// (escapes left as they are) and its value's bytes.
func JSONMembers(data []byte, fn func(key, value []byte) error) error {
	i := skipWS(data, 0)
	end, err := members(data, i, func(key []byte, _ bool, v int) (int, error) {
		end, err := skipValue(data, v)
		if err != nil {
			return 0, err
		}
		return end, fn(key, data[v:end])
	})
	if err != nil {
		return err
	}
	if skipWS(data, end) != len(data) {
		return jsonErr(data, end, "data after the object")
	}
	return nil
}

// JSONElements returns how many elements the JSON array data holds, and
// calls fn, unless nil, with each one's bytes.
func JSONElements(data []byte, fn func(elem []byte) error) (int, error) {
	n := 0
	_, err := elements(data, skipWS(data, 0), func(v int) (int, error) {
		end, err := skipValue(data, v)
		if err != nil {
			return 0, err
		}
		n++
		if fn != nil {
			err = fn(data[v:end])
		}
		return end, err
	})
	return n, err
}
