// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3 at the version pinned
// in this module's go.mod. The testenv package runs it as a child process; it takes etcd's own
// flags unchanged.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
