package adapters

import "strings"

// Linker is an adapter that names a page where people open a thread (its
// permalink), for what points back at it from elsewhere: a pull request's
// description. ThreadLink is "" when it cannot name one (not identified
// with the platform yet). It makes no call to the platform.
type Linker interface {
	ThreadLink(t ThreadRef) string
}

// PercentEncode encodes every byte of s but the unreserved ones of RFC
// 3986 (letters, digits, "-", ".", "_", "~"), for an identifier put into a
// link's path or fragment whole (a Matrix room's "!" and ":").
func PercentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}
