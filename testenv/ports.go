package testenv

import (
	"fmt"
	"net"
)

// pickPorts chooses the ports of a new Env; tests replace it to force a conflict.
var pickPorts = freePorts

// freePorts returns n distinct TCP ports on 127.0.0.1 that were free a moment ago. The
// listeners are all held open until every port has been chosen, so the n ports differ;
// another process may still take one before the server binds it, in which case that
// server fails to start and Start reports its log.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("testenv: find a free loopback port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
