package intern

import "unsafe"

// fieldsKey returns the FieldsV1 table's key for raw. With aliasFieldKeys
// the key aliases raw instead of copying it: managedFields entries that
// name a pod's IPs are unique to the pod, and copies of those would double
// their memory until the table is emptied. raw is handed out as immutable
// (the contract of shared parts), so the key's bytes never change.
func (in *Interner) fieldsKey(raw []byte) string {
	if in.has(aliasFieldKeys) {
		return unsafe.String(unsafe.SliceData(raw), len(raw))
	}
	return string(raw)
}
