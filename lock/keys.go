package lock

// MaxKeyBytes is the longest user key accepted, in UTF-8 bytes after NFC
// normalisation.
const MaxKeyBytes = 512
