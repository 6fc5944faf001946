package intern

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Bounds of the FieldsV1 table: the longest FieldsV1.Raw shared, and the
// total length of the Raw the table refers to (which it keeps alive once
// the objects holding them are gone).
const (
	maxFields      = 64 << 10
	maxFieldsBytes = 4 << 20
)

func (in *Interner) objectMeta(m *metav1.ObjectMeta) {
	m.Namespace = in.str(m.Namespace)
	m.GenerateName = in.str(m.GenerateName)
	m.Labels = in.strMap(m.Labels)
	m.Annotations = in.strMap(m.Annotations)
	in.strList(m.Finalizers)
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i]
		o.APIVersion = in.str(o.APIVersion)
		o.Kind = in.str(o.Kind)
		o.Name = in.str(o.Name)
		o.UID = typedStr(in, o.UID)
	}
	for i := range m.ManagedFields {
		e := &m.ManagedFields[i]
		e.Manager = in.str(e.Manager)
		e.Operation = typedStr(in, e.Operation)
		e.APIVersion = in.str(e.APIVersion)
		e.FieldsType = in.str(e.FieldsType)
		e.Subresource = in.str(e.Subresource)
		if in.has(shareFields) {
			e.FieldsV1 = in.fieldsV1(e.FieldsV1)
		}
	}
}

// fieldsV1 returns the shared FieldsV1 equal to f.
func (in *Interner) fieldsV1(f *metav1.FieldsV1) *metav1.FieldsV1 {
	if f == nil || len(f.Raw) > maxFields {
		return f
	}
	if c, ok := in.fields[string(f.Raw)]; ok {
		return c
	}
	if in.fieldBytes+len(f.Raw) > maxFieldsBytes {
		clear(in.fields)
		in.fieldBytes = 0
	}
	// Shared bytes are handed out with their capacity equal to their
	// length, so even an append copies.
	f.Raw = f.Raw[:len(f.Raw):len(f.Raw)]
	in.fields[in.fieldsKey(f.Raw)] = f
	in.fieldBytes += len(f.Raw)
	return f
}
