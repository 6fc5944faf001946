package shard_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/shard"
)

// A replica of three takes the last third of the uid hash space; the
// Set says which objects are its own and what to ask the server for.
func Example() {
	mine, err := shard.NewSet(shard.UID, shard.Split(3)[2])
	if err != nil {
		panic(err)
	}
	fmt.Println(mine)
	fmt.Println(mine.Selector())

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", UID: "c3d2b1a0-5e4f-4a3b-9c8d-7e6f5a4b3c2d"}}
	fmt.Printf("hash %016x, mine: %v\n", shard.HashOf(pod, shard.UID), mine.Contains(pod))

	same, _ := shard.ParseSet("uid:2/3")
	fmt.Println(same == mine)
	// Output:
	// uid:0xaaaaaaaaaaaaaaaa-0x10000000000000000
	// shardRange(object.metadata.uid, '0xaaaaaaaaaaaaaaaa', '0x10000000000000000')
	// hash c1e4c9cae90d6cdf, mine: true
	// true
}
