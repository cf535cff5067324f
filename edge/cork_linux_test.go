package edge

import (
	"bufio"
	"io"
	"net"
	"syscall"
	"testing"
)

func corked(t *testing.T, c net.Conn) int {
	t.Helper()
	raw, err := c.(*peekedConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK)
	}); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	return v
}

// A streamed result corks the connection under the peek and lifts the cork at its end;
// every byte written corked arrives.
func TestCorkLiftedAtTheEnd(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := &peekedConn{Conn: sc, r: bufio.NewReader(sc)}
	defer c.Close()

	uncork := cork(c)
	if corked(t, c) != 1 {
		t.Fatal("not corked")
	}
	body := make([]byte, 1<<20)
	for i := range body {
		body[i] = byte(i)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < len(body); i += 4096 {
			c.Write(body[i : i+4096])
		}
		uncork()
	}()
	got := make([]byte, len(body))
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(body) {
		t.Fatal("bytes differ")
	}
	<-done
	if corked(t, c) != 0 {
		t.Fatal("still corked")
	}
	// Not a TCP connection: nothing to cork.
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	cork(a)()
}
