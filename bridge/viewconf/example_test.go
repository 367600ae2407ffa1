package viewconf_test

import (
	"fmt"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/bridge/viewconf"
	"github.com/otelpfs/otelpfs/pfscore"
)

// The views of a configuration file, as a schema's start-up form: every
// class that registers follows them.
func ExampleParse() {
	views, err := viewconf.Parse([]byte(`
file_format: "1.0"
meter_provider:
  views:
    - selector: {instrument_name: "wait/synch/mutex/*"}
      stream: {aggregation: {drop: {}}}
    - selector: {instrument_name: "wait/io/*"}
      stream: {aggregation: {sum: {}}}
`))
	if err != nil {
		panic(err)
	}
	s, err := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithInstrumentPolicy(bridge.InstrumentPolicy(views...)))
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"wait/synch/mutex/app/cache", "wait/io/file/app/log", "wait/synch/rwlock/app/map"} {
		c := s.MustRegister(name)
		fmt.Printf("%s ENABLED=%v TIMED=%v\n", name, c.Enabled(), c.Timed())
	}
	_, err = viewconf.Parse([]byte("meter_provider:\n  views:\n    - selector: {instrument_nmae: x}\n      stream: {}\n"))
	fmt.Println(err)
	// Output:
	// wait/synch/mutex/app/cache ENABLED=false TIMED=false
	// wait/io/file/app/log ENABLED=true TIMED=false
	// wait/synch/rwlock/app/map ENABLED=true TIMED=true
	// viewconf: bad view configuration: line 3: meter_provider.views[0].selector.instrument_nmae: unknown field (want one of instrument_name, instrument_type, meter_name, meter_schema_url, meter_version, unit)
}
