//go:build !unix

package rulesfile

// nonblock is 0 where opening a file does not wait for a writer.
const nonblock = 0
