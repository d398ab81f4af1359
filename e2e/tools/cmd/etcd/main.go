// Command etcd is the etcd server, built from the pinned go.etcd.io/etcd/server/v3
// so the e2e suite needs nothing but Go and the module proxy.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
