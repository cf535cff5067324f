package edge

import (
	"net"
	"syscall"
)

// cork holds back a TCP connection's partial segments (TCP_CORK) while a long body is
// written, and returns the function that lets them go. fasthttp writes a streamed body as
// one HTTP chunk and one system call per 4 KiB; corked, the kernel sends full segments
// (and wakes the reader) once per segment, not once per chunk. Uncorking sends what is
// held at once, and the kernel sends it anyway after 200 ms. Connections that are not
// TCP (tests' in-memory listeners) are left alone.
func cork(c net.Conn) (uncork func()) {
	sc, ok := c.(syscallConn)
	if !ok {
		return func() {}
	}
	raw, err := sc.SyscallConn()
	if err != nil || setCork(raw, 1) != nil {
		return func() {}
	}
	return func() { _ = setCork(raw, 0) }
}

func setCork(raw syscall.RawConn, on int) error {
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, on)
	}); err != nil {
		return err
	}
	return serr
}
