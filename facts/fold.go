package facts

import (
	"strings"
	"unicode/utf8"
)

// foldIndex finds a string in a list the way a scan with strings.EqualFold would: the first
// position of each key, lower-cased. For ASCII text, equal under EqualFold is equal once
// lower-cased; beyond ASCII folding is more than that (the Kelvin sign is a k), so a list with a key
// that is not ASCII has no index (nil) and every question about it is left to the scan, as is a
// question that is not ASCII.
//
// Written here because IAM names and ARNs are compared without case, and a cluster's roles, access
// entries and aws-auth mappings are asked about once per EC2NodeClass reviewed.
type foldIndex map[string]int

// newFoldIndex indexes the n keys key(0) … key(n-1).
func newFoldIndex(n int, key func(int) string) foldIndex {
	x := make(foldIndex, n)
	for i := range n {
		k := key(i)
		if !ascii(k) {
			return nil
		}
		k = strings.ToLower(k)
		if _, seen := x[k]; !seen {
			x[k] = i
		}
	}
	return x
}

// find returns the position of the first key equal to s ignoring case (-1: none); ok is false when
// the index cannot tell and the caller must scan.
func (x foldIndex) find(s string) (i int, ok bool) {
	if x == nil || !ascii(s) {
		return -1, false
	}
	// Lower-cased on the stack: indexing a map with string(bytes) does not allocate.
	var buf [256]byte
	key := append(buf[:0], s...)
	for j, c := range key {
		if 'A' <= c && c <= 'Z' {
			key[j] = c + 'a' - 'A'
		}
	}
	if i, found := x[string(key)]; found {
		return i, true
	}
	return -1, true
}

// firstFold returns the position of the first of the n keys equal to s ignoring case (-1: none),
// through x when it can tell.
func firstFold(x foldIndex, n int, key func(int) string, s string) int {
	if i, ok := x.find(s); ok {
		return i
	}
	for i := range n {
		if strings.EqualFold(key(i), s) {
			return i
		}
	}
	return -1
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
