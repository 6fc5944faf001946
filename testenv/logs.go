package testenv

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// errorLogLines is how many lines of a server's log an error from Start or StartAPIServer
// carries.
const errorLogLines = 30

// DumpLogs writes the last maxLines lines of etcd's and the apiserver's logs to w, each under
// a header naming the file; a failing test calls it before Stop removes them.
func (e *Env) DumpLogs(w io.Writer, maxLines int) error {
	for _, path := range []string{e.EtcdLogPath(), e.APIServerLogPath()} {
		tail, err := tailFile(path, maxLines)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "--- last %d lines of %s\n%s", maxLines, path, tail); err != nil {
			return err
		}
	}
	return nil
}

// withLogTail appends the end of the log at path to err.
func withLogTail(err error, path string) error {
	tail, terr := tailFile(path, errorLogLines)
	if terr != nil || len(tail) == 0 {
		return err
	}
	return fmt.Errorf("%w\n--- last lines of %s:\n%s", err, path, tail)
}

// tailFile returns the last n lines of the file at path, reading at most its last 256 KiB.
func tailFile(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("testenv: read log: %w", err)
	}
	defer f.Close()
	const window = 256 << 10
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("testenv: read log: %w", err)
	}
	off := max(fi.Size()-window, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return nil, fmt.Errorf("testenv: read log: %w", err)
	}
	data = bytes.TrimRight(data, "\n")
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == '\n' {
			if n--; n == 0 {
				return append(data[i+1:], '\n'), nil
			}
		}
	}
	if len(data) == 0 {
		return nil, nil
	}
	return append(data, '\n'), nil
}
