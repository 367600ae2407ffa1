package exporter_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"

	"github.com/otelpfs/otelpfs/exporter"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A service mounts the handler on its mux; here a test server stands in
// for the service. The POST switches the wait consumers on, by pattern; the
// GET reads them back as text.
func ExampleHandler() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	mux := http.NewServeMux()
	mux.Handle("/debug/pfs/", exporter.Handler(s, exporter.WithSetupChanges(true)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/debug/pfs/setup/consumers", "application/json",
		strings.NewReader(`{"name": "events_waits_%", "enabled": true}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	io.Copy(os.Stdout, resp.Body)
	resp.Body.Close()

	resp, err = http.Get(srv.URL + "/debug/pfs/tables/setup_consumers?format=text&where=" +
		url.QueryEscape("NAME LIKE 'events_waits_%'") + "&order=NAME")
	if err != nil {
		fmt.Println(err)
		return
	}
	io.Copy(os.Stdout, resp.Body)
	resp.Body.Close()
	// Output:
	// {"table":"setup_consumers","rows_matched":3}
	// NAME                       ENABLED
	// events_waits_current       YES
	// events_waits_history       YES
	// events_waits_history_long  YES
}

// Listen serves the handler on its own loopback port, for a service that
// has no HTTP server of its own.
func ExampleListen() {
	srv, err := exporter.Listen("127.0.0.1:6060", exporter.Handler(pfscore.Default()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "pfs tables unavailable:", err)
		return
	}
	defer srv.Close()
	// … the service runs; meanwhile: pfs tables --addr 127.0.0.1:6060 threads
}

func ExampleFormatPicoTime() {
	for _, ps := range []uint64{42, 3501, 1_230_000, 45_670_000_000, 188_732_396_662_000} {
		fmt.Println(exporter.FormatPicoTime(ps))
	}
	// Output:
	//  42 ps
	// 3.50 ns
	// 1.23 us
	// 45.67 ms
	// 3.15 min
}
