// Package idle is what both sides of process-baseline-rss do once their
// factory is made: settle, then report the process's memory.
package idle

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Result is what a side prints: its resident set (VmRSS), the part of it
// backed by files (RssFile: the binary's pages) and anonymous (RssAnon),
// its Go heap in use, and the size of its executable.
type Result struct {
	RSSKB      int64 `json:"rssKB"`
	RSSFileKB  int64 `json:"rssFileKB"`
	RSSAnonKB  int64 `json:"rssAnonKB"`
	HeapBytes  int64 `json:"heapBytes"`
	BinaryByte int64 `json:"binaryBytes"`
}

// Report collects garbage, waits a moment for the runtime's background
// work to finish, and writes the Result as one JSON line.
func Report(w io.Writer) error {
	runtime.GC()
	time.Sleep(200 * time.Millisecond)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res := Result{HeapBytes: int64(ms.HeapInuse)}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			res.RSSKB = kb
		case "RssFile":
			res.RSSFileKB = kb
		case "RssAnon":
			res.RSSAnonKB = kb
		}
	}
	if res.RSSKB == 0 {
		return fmt.Errorf("no VmRSS in /proc/self/status")
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	st, err := os.Stat(exe)
	if err != nil {
		return err
	}
	res.BinaryByte = st.Size()
	return json.NewEncoder(w).Encode(res)
}
