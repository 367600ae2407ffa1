package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

// maxHTTPResponse bounds how much of an OTLP/HTTP response is read: a
// response is an ExportTraceServiceResponse or a google.rpc.Status, small.
const maxHTTPResponse = 1 << 20

// httpUserAgent identifies the exporter, as the OTLP specification asks.
const httpUserAgent = "otelpfs-otlp-exporter"

// httpTraceSender sends an export request as OTLP/HTTP: the request
// marshalled to binary protobuf, POSTed to the traces URL
// (application/x-protobuf, gzipped if configured).
type httpTraceSender struct {
	url       string
	headers   map[string]string
	gzip      bool
	transport *http.Transport
	client    *http.Client
}

func newHTTPTraceSender(cfg traceConfig) (*httpTraceSender, error) {
	if cfg.url == "" {
		return nil, errors.New("no URL for OTLP/HTTP")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	switch {
	case cfg.insecure:
	case cfg.tlsConfig != nil:
		tr.TLSClientConfig = cfg.tlsConfig.Clone()
	default:
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return &httpTraceSender{url: cfg.url, headers: cfg.headers, gzip: cfg.compression == "gzip",
		transport: tr, client: &http.Client{Transport: tr}}, nil
}

func (h *httpTraceSender) export(ctx context.Context, req ptraceotlp.ExportRequest) (int64, string, error) {
	body, err := req.MarshalProto()
	if err != nil {
		return 0, "", fmt.Errorf("marshal: %w", err) // not an httpExportError: not retried
	}
	if h.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		if err := zw.Close(); err != nil {
			return 0, "", fmt.Errorf("gzip: %w", err)
		}
		body = buf.Bytes()
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	r.Header.Set("Content-Type", "application/x-protobuf")
	r.Header.Set("User-Agent", httpUserAgent)
	if h.gzip {
		r.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := h.client.Do(r)
	if err != nil {
		// No answer: refused, reset, timed out. Worth another attempt.
		return 0, "", &httpExportError{err: err}
	}
	defer resp.Body.Close()
	data, readErr := io.ReadAll(io.LimitReader(resp.Body, maxHTTPResponse))
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		// Accepted. The body, if any, may carry a partial success; one
		// that cannot be read is not a reason to send the spans again.
		if readErr != nil || len(data) == 0 || !isProtobuf(resp.Header) {
			return 0, "", nil
		}
		er := ptraceotlp.NewExportResponse()
		if er.UnmarshalProto(data) != nil {
			return 0, "", nil
		}
		ps := er.PartialSuccess()
		return ps.RejectedSpans(), ps.ErrorMessage(), nil
	}
	return 0, "", &httpExportError{status: resp.StatusCode,
		retryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
		msg:        statusMessage(resp.Header, data)}
}

func (h *httpTraceSender) close() error {
	h.transport.CloseIdleConnections()
	return nil
}

func isProtobuf(h http.Header) bool {
	ct, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.TrimSpace(ct) == "application/x-protobuf"
}

// statusMessage is what a failed response says: the message of the
// google.rpc.Status an OTLP/HTTP receiver sends, or else the start of the
// body as text.
func statusMessage(h http.Header, data []byte) string {
	if isProtobuf(h) {
		var st spb.Status
		if proto.Unmarshal(data, &st) == nil && st.GetMessage() != "" {
			return st.GetMessage()
		}
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(data[:min(len(data), 256)]), "\uFFFD"))
}

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date
// (relative to now). 0 if absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// httpExportError is an OTLP/HTTP export that failed: no answer (err), or
// an answer with a status other than 2xx.
type httpExportError struct {
	status     int           // 0: no answer
	retryAfter time.Duration // the Retry-After header, 0 if none
	msg        string        // the receiver's message
	err        error         // no answer: why
}

func (e *httpExportError) Error() string {
	if e.status == 0 {
		return fmt.Sprintf("OTLP/HTTP: %v", e.err)
	}
	s := fmt.Sprintf("OTLP/HTTP: %d %s", e.status, http.StatusText(e.status))
	if e.msg != "" {
		s += ": " + e.msg
	}
	return s
}

func (e *httpExportError) Unwrap() error { return e.err }

// retryable: the OTLP/HTTP specification's transient statuses, and no
// answer at all.
func (e *httpExportError) retryable() bool {
	switch e.status {
	case 0, http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout:
		return true
	}
	return false
}
