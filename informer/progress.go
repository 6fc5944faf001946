package informer

import "github.com/kinformer/kinformer/reflector"

// Progress reports how the informer's lists are going: the initial sync or
// a relist under way (objects, bytes, pages, the server's remaining count,
// rate and ETA), and the streaming lists given up and stalled watches
// restarted so far. It is the zero Progress before Run. See
// reflector.Progress.
func (inf *Shared[T]) Progress() reflector.Progress { return inf.reflector.Progress() }
