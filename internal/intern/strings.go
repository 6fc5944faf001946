package intern

// Bounds of the string table.
const (
	// maxString is the longest string interned: labels, names, images;
	// not last-applied-configuration annotations.
	maxString = 256
	// maxStrings is the number of strings kept.
	maxStrings = 1 << 16
)

// str returns the interned copy of s.
func (in *Interner) str(s string) string {
	if len(s) == 0 || len(s) > maxString {
		return s
	}
	if c, ok := in.strs[s]; ok {
		return c
	}
	if len(in.strs) >= maxStrings {
		clear(in.strs)
	}
	in.strs[s] = s
	return s
}

// strList interns the elements of ss in place.
func (in *Interner) strList(ss []string) {
	for i, s := range ss {
		ss[i] = in.str(s)
	}
}

// strMap returns m with its keys and values interned: a new map (keys
// cannot be replaced in place), or m itself when it is empty. The new map
// is the object's own; only its strings are shared.
func (in *Interner) strMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[in.str(k)] = in.str(v)
	}
	return out
}

// typedStr interns a value of a named string type (corev1.RestartPolicy,
// types.UID, ...).
func typedStr[S ~string](in *Interner, s S) S { return S(in.str(string(s))) }
