package contract

// IsFence reports whether s is a well-formed fence: exactly FenceDigits
// ASCII digits.
func IsFence(s string) bool {
	if len(s) != FenceDigits {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
