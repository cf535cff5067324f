//go:build !linux

package edge

import "net"

// cork is a no-op where TCP_CORK does not exist.
func cork(net.Conn) (uncork func()) { return func() {} }
