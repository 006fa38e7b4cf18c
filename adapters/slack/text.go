package slack

import "unicode/utf8"

// runes counts the characters of s.
func runes(s string) int { return utf8.RuneCountInString(s) }
