package instrument_test

import (
	"context"
	"fmt"
	"io"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A server listens with one class for its listening socket and another for
// the connections it accepts; a client dials with a third. Their waits land
// in socket_summary_by_event_name, which keeps them after the sockets close.
func ExampleSocketClass() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	opt := instrument.WithSchema(s)
	listenClass := instrument.NewSocketClass("wait/io/socket/app/server_tcpip_socket", opt)
	serverConns := instrument.NewSocketClass("wait/io/socket/app/client_connection", opt)
	clients := instrument.NewSocketClass("wait/io/socket/app/echo_client", opt)

	ln, err := listenClass.Listen("tcp", "127.0.0.1:0", serverConns)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	go func() { // an echo server
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(c, c)
		c.Close()
	}()

	conn, err := clients.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	conn.Write([]byte("ping"))
	reply := make([]byte, 4)
	io.ReadFull(conn, reply)
	conn.Close()
	fmt.Printf("reply %q\n", reply)

	res, _ := s.Select("socket_summary_by_event_name")
	for _, row := range res.Rows {
		m := map[string]any{}
		for i, c := range res.Columns {
			m[c.Name] = row[i]
		}
		if m["EVENT_NAME"] == "wait/io/socket/app/echo_client" {
			fmt.Println("COUNT_WRITE:", m["COUNT_WRITE"], "SUM_NUMBER_OF_BYTES_WRITE:", m["SUM_NUMBER_OF_BYTES_WRITE"])
			fmt.Println("SUM_NUMBER_OF_BYTES_READ:", m["SUM_NUMBER_OF_BYTES_READ"])
			fmt.Println("COUNT_MISC:", m["COUNT_MISC"], "(connect, close)")
		}
	}
	// Output:
	// reply "ping"
	// COUNT_WRITE: 1 SUM_NUMBER_OF_BYTES_WRITE: 4
	// SUM_NUMBER_OF_BYTES_READ: 4
	// COUNT_MISC: 2 (connect, close)
}
