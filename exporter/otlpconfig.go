package exporter

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelpfs/otelpfs/bridge"
	"github.com/otelpfs/otelpfs/pfscore"
)

// Defaults of the OTLP pipeline, as the OpenTelemetry specification sets
// them where it does.
const (
	DefaultOTLPEndpoint     = "localhost:4317"        // OTLP/gRPC
	DefaultOTLPHTTPEndpoint = "http://localhost:4318" // OTLP/HTTP; /v1/metrics and /v1/traces are appended
	DefaultExportInterval   = 60 * time.Second        // OTEL_METRIC_EXPORT_INTERVAL
	DefaultExportTimeout    = 30 * time.Second        // OTEL_METRIC_EXPORT_TIMEOUT
	DefaultOTLPTimeout      = 10 * time.Second        // OTEL_EXPORTER_OTLP_TIMEOUT
	DefaultSpanInterval     = 200 * time.Millisecond  // how often the captured trees are read
	DefaultSpanQueueSize    = 8192                    // spans waiting to be sent, the batch in flight included; more are dropped and counted
	defaultSpanIntervalEnv  = "OTELPFS_SPAN_INTERVAL"
)

// The OTLP protocols (OTEL_EXPORTER_OTLP_PROTOCOL, WithProtocol).
const (
	ProtocolGRPC         = "grpc"          // OTLP/gRPC, otelpfs's default
	ProtocolHTTPProtobuf = "http/protobuf" // OTLP/HTTP with binary protobuf bodies
)

// maxMillis is the most milliseconds a time.Duration holds (292 years).
const maxMillis = uint64(math.MaxInt64 / int64(time.Millisecond))

// An OTLPOption configures StartOTLP. Options override the environment.
type OTLPOption interface {
	applyOTLP(*otlpConfig)
}

type otlpOptionFunc func(*otlpConfig)

func (f otlpOptionFunc) applyOTLP(c *otlpConfig) { f(c) }

// signalConfig is where one signal (metrics or traces) goes.
type signalConfig struct {
	enabled     bool
	protocol    string // ProtocolGRPC or ProtocolHTTPProtobuf
	endpoint    string // host:port (gRPC; for HTTP the URL's host)
	url         string // http/protobuf: the URL to POST to
	insecure    bool
	tls         *tls.Config // nil and !insecure: the system's roots
	headers     map[string]string
	timeout     time.Duration // one export
	compression string        // "gzip" or "" (none)

	// ep is the endpoint as configured, resolved into endpoint and url
	// once the protocol is known (after the options).
	ep endpointSpec
}

// endpointSpec is a configured endpoint, before the protocol says what it
// means.
type endpointSpec struct {
	set       bool
	name      string // the variable or option that set it, for errors
	fromEnv   bool
	perSignal bool   // OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT: an HTTP URL used as is
	scheme    string // "http", "https", or "" for host:port
	host      string // host[:port]
	path      string
	rawQuery  string
}

// otlpConfig is StartOTLP's configuration: the environment, then options.
type otlpConfig struct {
	disabled      bool
	metrics       signalConfig
	traces        signalConfig
	interval      time.Duration // metric collection and export period
	exportTimeout time.Duration // one collection and export
	serviceName   string        // "" leaves OTEL_SERVICE_NAME or the SDK's default
	attrs         []attribute.KeyValue
	producerOpts  []bridge.Option
	sqlText       bool
	spanInterval  time.Duration
	spanQueueSize int
	sampler       pfscore.TraceSampler // OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG
	spanExporter  sdktrace.SpanExporter
	envResource   []attribute.KeyValue // OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME
	errs          []error              // what the environment or options got wrong
	envErrs       int                  // how many of errs the environment made; the rest are the options
}

// newOTLPConfig reads the environment through getenv, then applies opts.
func newOTLPConfig(getenv func(string) string, opts []OTLPOption) otlpConfig {
	c := otlpConfig{
		interval:      DefaultExportInterval,
		exportTimeout: DefaultExportTimeout,
		spanInterval:  DefaultSpanInterval,
		spanQueueSize: DefaultSpanQueueSize,
		sampler:       pfscore.TraceSampler{ParentBased: true, Ratio: 1},
	}
	c.readEnv(getenv)
	c.envErrs = len(c.errs)
	for _, o := range opts {
		o.applyOTLP(&c)
	}
	c.resolve(&c.metrics, "metrics")
	c.resolve(&c.traces, "traces")
	return c
}

// resolve turns a signal's endpoint into what its protocol sends to, as
// the specification says: for gRPC host:port (a URL without a port gets
// 4317; a URL has no path); for http/protobuf a URL, the general endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT, WithEndpoint) with /v1/<signal> appended to
// its path, the per-signal one as it is (but / for no path). The scheme
// follows insecure (http without TLS, https with), which the endpoint's
// own scheme set unless an option changed it since.
func (c *otlpConfig) resolve(s *signalConfig, signal string) {
	if s.protocol == "" {
		s.protocol = ProtocolGRPC
	}
	ep := s.ep
	fail := func(err error) {
		err = fmt.Errorf("%s: %w", ep.name, err)
		if ep.fromEnv { // the environment's errors come first (envErrs)
			c.errs = slices.Insert(c.errs, c.envErrs, err)
			c.envErrs++
		} else {
			c.errs = append(c.errs, err)
		}
	}
	switch s.protocol {
	case ProtocolGRPC:
		s.url = ""
		if !ep.set {
			s.endpoint = DefaultOTLPEndpoint
			return
		}
		if ep.scheme == "" {
			s.endpoint = ep.host
			return
		}
		if ep.path != "" && ep.path != "/" || ep.rawQuery != "" {
			fail(fmt.Errorf("%q: an OTLP/gRPC endpoint has no path", ep.url()))
			return
		}
		s.endpoint = ep.host
		if _, _, err := net.SplitHostPort(ep.host); err != nil {
			s.endpoint = net.JoinHostPort(strings.Trim(ep.host, "[]"), "4317")
		}
	case ProtocolHTTPProtobuf:
		u := url.URL{Host: strings.TrimPrefix(DefaultOTLPHTTPEndpoint, "http://"), Path: "/v1/" + signal}
		if ep.set {
			u.Host, u.RawQuery = ep.host, ep.rawQuery
			if ep.perSignal {
				u.Path = cmp.Or(ep.path, "/")
			} else {
				u.Path = strings.TrimSuffix(ep.path, "/") + "/v1/" + signal
			}
		}
		u.Scheme = "https"
		if s.insecure {
			u.Scheme = "http"
		}
		s.endpoint, s.url = u.Host, u.String()
	}
}

// readEnv applies the OTEL_* variables the specification defines for an
// OTLP exporter and an SDK, as far as otelpfs uses them.
func (c *otlpConfig) readEnv(getenv func(string) string) {
	if b, ok := c.envBool(getenv, "OTEL_SDK_DISABLED"); ok {
		c.disabled = b
	}
	c.metrics = c.signalEnv(getenv, "METRICS")
	c.traces = c.signalEnv(getenv, "TRACES")
	if v := strings.TrimSpace(getenv("OTEL_METRICS_EXPORTER")); v != "" {
		c.metrics.enabled = c.exporterEnv("OTEL_METRICS_EXPORTER", v)
	}
	if v := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); v != "" {
		c.traces.enabled = c.exporterEnv("OTEL_TRACES_EXPORTER", v)
	}
	if d, ok := c.envMillis(getenv, "OTEL_METRIC_EXPORT_INTERVAL"); ok {
		c.interval = d
	}
	if d, ok := c.envMillis(getenv, "OTEL_METRIC_EXPORT_TIMEOUT"); ok {
		c.exportTimeout = d
	}
	if d, ok := c.envMillis(getenv, defaultSpanIntervalEnv); ok {
		c.spanInterval = d
	}
	c.readSamplerEnv(getenv)
	if v := strings.TrimSpace(getenv("OTEL_RESOURCE_ATTRIBUTES")); v != "" {
		attrs, err := parseResourceAttributes(v)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err))
		}
		c.envResource = attrs
	}
	if v := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); v != "" {
		c.envResource = append(c.envResource, attribute.String("service.name", v))
	}
}

// readSamplerEnv reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG as
// the specification defines them, for the samplers otelpfs has:
// always_on, always_off, traceidratio, parentbased_always_on (the
// default), parentbased_always_off and parentbased_traceidratio, whose
// ratio is the argument (a number from 0 to 1; 1 by default). Another
// sampler, or a bad ratio, is an error of the environment.
func (c *otlpConfig) readSamplerEnv(getenv func(string) string) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	if name == "" {
		return
	}
	ratio := 1.0
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	if strings.HasSuffix(name, "traceidratio") && arg != "" {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 || math.IsNaN(r) {
			c.errs = append(c.errs, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want a ratio from 0 to 1", arg))
			return
		}
		ratio = r
	}
	switch name {
	case "always_on":
		c.sampler = pfscore.TraceSampler{Ratio: 1}
	case "always_off":
		c.sampler = pfscore.TraceSampler{Ratio: 0}
	case "traceidratio":
		c.sampler = pfscore.TraceSampler{Ratio: ratio}
	case "parentbased_always_on":
		c.sampler = pfscore.TraceSampler{ParentBased: true, Ratio: 1}
	case "parentbased_always_off":
		c.sampler = pfscore.TraceSampler{ParentBased: true, Ratio: 0}
	case "parentbased_traceidratio":
		c.sampler = pfscore.TraceSampler{ParentBased: true, Ratio: ratio}
	default:
		c.errs = append(c.errs, fmt.Errorf("OTEL_TRACES_SAMPLER=%q: otelpfs has always_on, always_off, traceidratio and their parentbased_ forms", name))
	}
}

// parseResourceAttributes reads OTEL_RESOURCE_ATTRIBUTES: key=value pairs
// separated by commas, values percent-encoded; string values.
func parseResourceAttributes(v string) ([]attribute.KeyValue, error) {
	var attrs []attribute.KeyValue
	for _, kv := range strings.Split(v, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, val, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want key=value", kv)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("%q: %v", kv, err)
		}
		attrs = append(attrs, attribute.String(k, dec))
	}
	return attrs, nil
}

// exporterEnv reads OTEL_METRICS_EXPORTER or OTEL_TRACES_EXPORTER: otlp
// (the default) or none.
func (c *otlpConfig) exporterEnv(name, v string) bool {
	switch v {
	case "otlp":
		return true
	case "none":
		return false
	}
	c.errs = append(c.errs, fmt.Errorf("%s=%s: otelpfs knows otlp and none", name, v))
	return true
}

// signalEnv reads one signal's OTEL_EXPORTER_OTLP_<SIGNAL>_* variables,
// falling back on OTEL_EXPORTER_OTLP_*.
func (c *otlpConfig) signalEnv(getenv func(string) string, signal string) signalConfig {
	get := func(suffix string) (string, string) {
		name := "OTEL_EXPORTER_OTLP_" + signal + "_" + suffix
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return name, v
		}
		name = "OTEL_EXPORTER_OTLP_" + suffix
		return name, strings.TrimSpace(getenv(name))
	}
	s := signalConfig{enabled: true, insecure: true, timeout: DefaultOTLPTimeout}
	// The specification's default endpoints are http://localhost:4317
	// (gRPC) and http://localhost:4318 (HTTP): no TLS.
	insecureName, insecureVal := get("INSECURE")
	if insecureVal != "" {
		b, err := strconv.ParseBool(insecureVal)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("%s=%s: want true or false", insecureName, insecureVal))
		}
		s.insecure = b
	}
	if name, v := get("PROTOCOL"); v != "" {
		p, err := parseProtocol(v)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("%s=%s: %w", name, v, err))
		}
		s.protocol = p
	}
	if name, v := get("ENDPOINT"); v != "" {
		ep, err := parseEndpoint(v)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("%s: %w", name, err))
		} else {
			ep.name, ep.fromEnv, ep.perSignal = name, true, name != "OTEL_EXPORTER_OTLP_ENDPOINT"
			s.ep = ep
			if ep.scheme != "" { // the scheme decides; INSECURE applies without one
				s.insecure = ep.scheme == "http"
			} else if insecureVal == "" {
				s.insecure = false
			}
		}
	}
	if name, v := get("COMPRESSION"); v != "" {
		switch v {
		case "gzip":
			s.compression = "gzip"
		case "none":
		default:
			c.errs = append(c.errs, fmt.Errorf("%s=%s: want gzip or none", name, v))
		}
	}
	if name, v := get("HEADERS"); v != "" {
		h, err := parseHeaders(v)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("%s: %w", name, err))
		}
		s.headers = h
	}
	if name, v := get("TIMEOUT"); v != "" {
		ms, err := strconv.ParseUint(v, 10, 63)
		if err != nil || ms > maxMillis {
			c.errs = append(c.errs, fmt.Errorf("%s=%s: want milliseconds, at most %d", name, v, maxMillis))
		} else {
			s.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	if name, v := get("CERTIFICATE"); v != "" {
		pem, err := os.ReadFile(v)
		if err == nil {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				err = errors.New("no PEM certificate in the file")
			}
			s.tls = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("%s=%s: %w", name, v, err))
		}
	}
	return s
}

func (c *otlpConfig) envBool(getenv func(string) string, name string) (bool, bool) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return false, false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("%s=%s: want true or false", name, v))
		return false, false
	}
	return b, true
}

func (c *otlpConfig) envMillis(getenv func(string) string, name string) (time.Duration, bool) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return 0, false
	}
	ms, err := strconv.ParseUint(v, 10, 63)
	if err != nil || ms == 0 || ms > maxMillis {
		c.errs = append(c.errs, fmt.Errorf("%s=%s: want a positive number of milliseconds, at most %d", name, v, maxMillis))
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// parseEndpoint reads an OTLP endpoint: a URL (http:// means no TLS,
// https:// TLS) or host:port. What its path and a missing port mean
// depends on the protocol (resolve).
func parseEndpoint(v string) (endpointSpec, error) {
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil {
			return endpointSpec{}, fmt.Errorf("%q is not a URL: %v", v, err)
		}
		switch u.Scheme {
		case "http", "https":
		default:
			return endpointSpec{}, fmt.Errorf("%q: the scheme must be http or https", v)
		}
		if u.Hostname() == "" || u.User != nil {
			return endpointSpec{}, fmt.Errorf("%q: want http(s)://host[:port][/path]", v)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
				return endpointSpec{}, fmt.Errorf("%q: bad port %q", v, p)
			}
		}
		return endpointSpec{set: true, scheme: u.Scheme, host: u.Host, path: u.Path, rawQuery: u.RawQuery}, nil
	}
	h, p, err := net.SplitHostPort(v)
	if err != nil || h == "" || p == "" {
		return endpointSpec{}, fmt.Errorf("%q: want host:port or http(s)://host:port", v)
	}
	if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
		return endpointSpec{}, fmt.Errorf("%q: bad port %q", v, p)
	}
	return endpointSpec{set: true, host: v}, nil
}

// url writes the endpoint back as configured, for errors.
func (e endpointSpec) url() string {
	if e.scheme == "" {
		return e.host
	}
	return (&url.URL{Scheme: e.scheme, Host: e.host, Path: e.path, RawQuery: e.rawQuery}).String()
}

// parseProtocol reads OTEL_EXPORTER_OTLP_PROTOCOL's values.
func parseProtocol(v string) (string, error) {
	switch v {
	case ProtocolGRPC, ProtocolHTTPProtobuf:
		return v, nil
	case "http/json":
		return "", errors.New("otelpfs sends OTLP as protobuf only: grpc or http/protobuf, not http/json")
	}
	return "", errors.New("want grpc or http/protobuf")
}

// parseHeaders reads OTEL_EXPORTER_OTLP_HEADERS: key=value pairs separated
// by commas, values percent-encoded.
func parseHeaders(v string) (map[string]string, error) {
	h := map[string]string{}
	for _, kv := range strings.Split(v, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, val, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want key=value", kv)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("%q: %v", kv, err)
		}
		h[strings.ToLower(k)] = dec
	}
	return h, nil
}

// WithEndpoint sends both signals to endpoint, as
// OTEL_EXPORTER_OTLP_ENDPOINT would: a URL whose scheme chooses TLS (https)
// or none (http), or host:port, which keeps the choice the environment
// made (by default none, as for the default endpoints). Over gRPC the URL
// has no path (and 4317 when it names no port); over http/protobuf
// /v1/metrics and /v1/traces are appended to its path. It beats
// OTEL_EXPORTER_OTLP_ENDPOINT and the per-signal variables.
func WithEndpoint(endpoint string) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) {
		ep, err := parseEndpoint(endpoint)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("WithEndpoint: %w", err))
			return
		}
		ep.name = "WithEndpoint"
		for _, s := range []*signalConfig{&c.metrics, &c.traces} {
			s.ep = ep
			if ep.scheme != "" {
				s.insecure = ep.scheme == "http"
			}
		}
	})
}

// WithProtocol sends both signals over protocol, ProtocolGRPC or
// ProtocolHTTPProtobuf, beating OTEL_EXPORTER_OTLP_PROTOCOL and the
// per-signal variables.
func WithProtocol(protocol string) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) {
		p, err := parseProtocol(protocol)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("WithProtocol(%q): %w", protocol, err))
			return
		}
		c.metrics.protocol, c.traces.protocol = p, p
	})
}

// WithInsecure (true) sends OTLP without TLS; false requires TLS.
func WithInsecure(insecure bool) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) {
		c.metrics.insecure, c.traces.insecure = insecure, insecure
	})
}

// WithTLSConfig sends OTLP over TLS configured by cfg.
func WithTLSConfig(cfg *tls.Config) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) {
		c.metrics.tls, c.traces.tls = cfg, cfg
		c.metrics.insecure, c.traces.insecure = false, false
	})
}

// WithHeaders sends headers (gRPC metadata, or HTTP headers) with every
// export, replacing OTEL_EXPORTER_OTLP_HEADERS.
func WithHeaders(headers map[string]string) OTLPOption {
	headers = maps.Clone(headers) // the caller may change its map later
	return otlpOptionFunc(func(c *otlpConfig) {
		c.metrics.headers, c.traces.headers = headers, headers
	})
}

// WithExportInterval sets how often the summaries are collected and sent
// (OTEL_METRIC_EXPORT_INTERVAL; by default DefaultExportInterval).
func WithExportInterval(d time.Duration) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) {
		if d <= 0 {
			c.errs = append(c.errs, fmt.Errorf("WithExportInterval(%v): want a positive interval", d))
			return
		}
		c.interval = d
	})
}

// WithServiceName sets the resource's service.name, beating
// OTEL_SERVICE_NAME.
func WithServiceName(name string) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) { c.serviceName = name })
}

// WithResourceAttributes adds attributes to the resource, beating
// OTEL_RESOURCE_ATTRIBUTES where they name the same key.
func WithResourceAttributes(attrs ...attribute.KeyValue) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) { c.attrs = append(c.attrs, attrs...) })
}

// WithProducerOptions configures the metric producer (bridge.NewProducer):
// which tables, how many digests, views.
func WithProducerOptions(opts ...bridge.Option) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) { c.producerOpts = append(c.producerOpts, opts...) })
}

// WithSpans (false) sends no spans, as OTEL_TRACES_EXPORTER=none. By
// default the pipeline sends, for every sampled trace (WithSampler), the
// spans of each top-level statement (an HTTP request, a connection's
// command) with its stages, nested statements and waits: it turns on the
// schema's trace capture (pfscore.Schema.EnableTraceCapture, with the
// current consumers of statements, stages and waits), and installs
// bridge.TraceContext as the trace hook unless one is installed, so that
// statements record their context's span and pfshttp reads the caller's
// traceparent.
func WithSpans(enabled bool) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) { c.traces.enabled = enabled })
}

// WithSQLText (true) exports each statement's SQL_TEXT as db.query.text.
// By default raw SQL stays in the process: spans carry DIGEST_TEXT, which
// holds no literal.
func WithSQLText(enabled bool) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) { c.sqlText = enabled })
}

// WithSpanExporter sends the spans through the application's own
// OpenTelemetry span exporter (an otlptracegrpc, otlptracehttp or vendor
// exporter it already has) instead of otelpfs's OTLP client: the
// OTEL_EXPORTER_OTLP_TRACES_* settings do not apply, the exporter's own
// retries do, and the application shuts it down after StartOTLP's
// Shutdown. The spans are bridge.ReadOnlySpans of the resource StartOTLP
// made.
func WithSpanExporter(exp sdktrace.SpanExporter) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) {
		c.spanExporter = exp
		if exp != nil {
			c.traces.enabled = true
		}
	})
}

// WithSampler sets which traces' spans are sent, as OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG do (by default parentbased_always_on: a request
// whose caller sampled its trace, or that has no caller's trace).
func WithSampler(s pfscore.TraceSampler) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) { c.sampler = s })
}

// WithSpanInterval sets how often the captured trees are read for spans
// (OTELPFS_SPAN_INTERVAL in milliseconds; by default DefaultSpanInterval).
// Trees wait in the schema's queue (4096 trees) meanwhile: a tree that
// finds it full is counted in global_status as
// Performance_schema_export_events_lost.
func WithSpanInterval(d time.Duration) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) {
		if d <= 0 {
			c.errs = append(c.errs, fmt.Errorf("WithSpanInterval(%v): want a positive interval", d))
			return
		}
		c.spanInterval = d
	})
}

// WithSpanQueueSize sets how many spans may wait to be sent (by default
// DefaultSpanQueueSize); more are dropped and counted in global_status as
// Performance_schema_export_spans_lost.
func WithSpanQueueSize(n int) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) {
		if n <= 0 {
			c.errs = append(c.errs, fmt.Errorf("WithSpanQueueSize(%d): want a positive size", n))
			return
		}
		c.spanQueueSize = n
	})
}

// WithMetrics (false) sends no metrics, as OTEL_METRICS_EXPORTER=none.
func WithMetrics(enabled bool) OTLPOption {
	return otlpOptionFunc(func(c *otlpConfig) { c.metrics.enabled = enabled })
}
