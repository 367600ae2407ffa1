package exporter_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"time"

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

// A Client is the service's tables seen from another process: a
// pfscore.Tables over HTTP, so the same code reads and changes a remote
// schema or a local one. Here a test server stands in for the service.
func ExampleNewClient() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	srv := httptest.NewServer(exporter.Handler(s, exporter.WithSetupChanges(true)))
	defer srv.Close()

	c, err := exporter.NewClient(srv.URL) // or "127.0.0.1:6060"; the handler is at /debug/pfs
	if err != nil {
		fmt.Println(err)
		return
	}
	var t pfscore.Tables = c
	where := []string{"NAME LIKE 'events_waits_%'"}
	n, err := t.Update("setup_consumers", where, map[string]pfscore.Value{"ENABLED": "YES"})
	fmt.Println("updated", n, err)
	res, err := t.Query("setup_consumers", pfscore.Query{Where: where, Order: "NAME desc", Limit: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	exporter.WriteText(os.Stdout, res)
	fmt.Println(len(res.Rows), "of", res.Matched, "rows")

	_, err = t.Query("events_waits_everything", pfscore.Query{})
	fmt.Println(errors.Is(err, pfscore.ErrUnknownTable))
	_, err = t.Update("setup_instruments", nil, map[string]pfscore.Value{"NAME": "x"})
	fmt.Println(errors.Is(err, pfscore.ErrNotUpdatable))
	// Output:
	// updated 3 <nil>
	// NAME                       ENABLED
	// events_waits_history_long  YES
	// events_waits_history       YES
	// 2 of 3 rows
	// true
	// true
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

// A service starts the OTLP pipeline once, next to its instruments, and
// shuts it down on the way out, which sends a last collection, within a
// deadline (under the orchestrator's grace period) whatever the endpoint
// does. The endpoint, the protocol, the service name and the interval
// usually come from the environment (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_SERVICE_NAME,
// OTEL_METRIC_EXPORT_INTERVAL); options override it.
func ExampleStartOTLP() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment())
	o, err := exporter.StartOTLP(context.Background(), s,
		exporter.WithEndpoint("http://127.0.0.1:4317"),
		exporter.WithServiceName("checkout"),
		exporter.WithExportInterval(10*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := o.Shutdown(ctx); err != nil {
			fmt.Println(err)
		}
	}()
	// ... the service runs ...
}
