package digest

import "testing"

const bench200 = "SELECT o.id, o.status, o.total, c.email FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.customer_id = 1017 AND o.status IN ('paid', 'shipped') ORDER BY o.created_at DESC LIMIT 20"

func BenchmarkNormalize200(b *testing.B) {
	n := New()
	b.SetBytes(int64(len(bench200)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		n.Normalize(bench200)
	}
}

func BenchmarkTokenize200(b *testing.B) {
	n := New()
	b.SetBytes(int64(len(bench200)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		n.tokenize(bench200)
	}
}

func BenchmarkRender200(b *testing.B) {
	n := New()
	n.tokenize(bench200)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		n.text = renderText(n.text[:0], n.st.buf)
	}
}

func BenchmarkLex200(b *testing.B) {
	var lx mysqlLexer
	var st stream
	for i := 0; i < b.N; i++ {
		st.reset(1024, nil)
		lx.reset(bench200, &st, 0, DefaultServerVersion, setMySQL80)
		lx.run()
	}
}
