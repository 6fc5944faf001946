package source

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/intern"
	"github.com/kinformer/kinformer/listwatch"
)

// internCodec makes c intern every object it decodes, in lists and in
// watch events, protobuf or JSON, as opts ask (see Options'
// DisableInterning and ShareMutableParts): nothing, strings only (the
// default), or strings and shared mutable parts. The machinery, and the
// benchmark that pays for it, is in internal/intern.
func internCodec[T cache.Object](c *codec[T], opts Options) {
	if opts.DisableInterning {
		return
	}
	in := intern.New(intern.Options{ShareParts: opts.ShareMutableParts})
	if proto := c.protoObject; proto != nil {
		// c.list decodes protobuf items through c.protoObject (read at
		// each call), so protobuf lists are interned item by item here,
		// before the next item is decoded.
		c.protoObject = func(raw []byte) (T, error) {
			t, err := proto(raw)
			if err == nil {
				in.Object(t)
			}
			return t, err
		}
		// Pods, the bulk of most caches, go through Pod, which with
		// shared parts cuts the repeated runs out of their bytes.
		if decode, ok := any(proto).(func([]byte) (*corev1.Pod, error)); ok {
			c.protoObject = any(func(raw []byte) (*corev1.Pod, error) {
				return in.Pod(raw, decode)
			}).(func([]byte) (T, error))
		}
	}
	jsonObject := c.jsonObject
	c.jsonObject = func(data []byte) (T, error) {
		t, err := jsonObject(data)
		if err == nil {
			in.Object(t)
		}
		return t, err
	}
	list := c.list
	c.list = func(body []byte, proto bool) (listwatch.Page[T], error) {
		page, err := list(body, proto)
		if err == nil && !proto {
			for _, t := range page.Items {
				in.Object(t)
			}
		}
		return page, err
	}
}
