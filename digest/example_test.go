package digest_test

import (
	"fmt"
	"sync"

	"github.com/otelpfs/otelpfs/digest"
)

func Example() {
	n := digest.New()
	for _, sql := range []string{
		"SELECT * FROM orders WHERE customer_id = 1017 AND state IN ('paid', 'shipped')",
		"select *  from orders where customer_id = 9 and state in ('new') -- retry",
	} {
		r := n.Normalize(sql)
		fmt.Println(string(r.Text))
		fmt.Println(len(r.Digest.Hex()), r.Version)
	}
	// Output:
	// SELECT * FROM `orders` WHERE `customer_id` = ? AND `state` IN (...)
	// 64 mysql80-server-1
	// SELECT * FROM `orders` WHERE `customer_id` = ? AND `state` IN (...)
	// 64 mysql80-server-1
}

func ExampleStatementDigestText() {
	fmt.Println(digest.StatementDigestText("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y')"))
	fmt.Println(digest.StatementDigestText("SELECT /*+ MAX_EXECUTION_TIME(1000) */ @@session.autocommit, -1"))
	fmt.Println(digest.StatementDigestText("CREATE DATABASE shop"))
	// Output:
	// INSERT INTO `t` ( `a` , `b` ) VALUES (...) /* , ... */
	// SELECT /*+ MAX_EXECUTION_TIME (?) */ @@SESSION . `autocommit` , ?
	// CREATE SCHEMA `shop`
}

func ExampleStatementDigest() {
	a := digest.StatementDigest("SELECT name FROM users WHERE id = 1")
	b := digest.StatementDigest("SELECT name FROM users WHERE id = 2")
	c := digest.StatementDigest("SELECT email FROM users WHERE id = 1")
	fmt.Println(a == b, a == c)
	// The statement of the STATEMENT_DIGEST() example in MySQL's manual:
	// the same DIGEST the server prints.
	fmt.Println(digest.StatementDigest("SELECT * FROM mytable WHERE cola = 10 AND colb = 20"))
	// Output:
	// true false
	// 3bb95eeade896657c4526e74ff2a2862039d0a0fe8a9e7155b5fe492cbd78387
}

// NumberingOtelpfs gives the digests of Version "mysql80-1", from before
// the server's numbering was the default. Its keyword set also knows words
// MySQL 8.0 does not (LOG here), so DIGEST_TEXT can differ too.
func ExampleWithNumbering() {
	server := digest.New() // NumberingMySQL80
	old := digest.New(digest.WithNumbering(digest.NumberingOtelpfs))
	const sql = "SELECT msg FROM log WHERE id = 7"
	a, b := server.Normalize(sql), old.Normalize(sql)
	fmt.Println(a.Version, string(a.Text))
	fmt.Println(b.Version, string(b.Text))
	fmt.Println(a.Digest == b.Digest)
	// Output:
	// mysql80-server-1 SELECT `msg` FROM `log` WHERE `id` = ?
	// mysql80-1 SELECT `msg` FROM LOG WHERE `id` = ?
	// false
}

func ExampleWithMaxDigestLength() {
	// Two bytes hold one token: everything after SELECT is dropped, so the
	// two statements share a digest (MySQL's func_digest_small_buffer test).
	n := digest.New(digest.WithMaxDigestLength(2))
	r1 := n.Normalize("SELECT 1")
	text := string(r1.Text)
	r2 := n.Normalize("SELECT 1 FROM DUAL")
	fmt.Println(text, r1.Digest == r2.Digest, r2.Truncated)
	// Output: SELECT true true
}

func ExampleWithSQLMode() {
	ansi := digest.New(digest.WithSQLMode(digest.ANSIQuotes))
	fmt.Println(string(ansi.Normalize(`SELECT "name" FROM "users"`).Text))
	fmt.Println(string(digest.New().Normalize(`SELECT "name" FROM "users"`).Text))
	// Output:
	// SELECT `name` FROM `users`
	// SELECT ? FROM ?
}

// A sync.Pool of Normalizers serves many goroutines without allocating in
// steady state.
func ExampleNormalizer_pool() {
	pool := sync.Pool{New: func() any { return digest.New() }}
	var wg sync.WaitGroup
	results := make([]string, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := pool.Get().(*digest.Normalizer)
			r := n.Normalize(fmt.Sprintf("UPDATE t SET v = %d WHERE id = %d", i*10, i))
			results[i] = string(r.Text) // copy before the Normalizer is reused
			pool.Put(n)
		}()
	}
	wg.Wait()
	fmt.Println(results[0] == results[3], results[0])
	// Output: true UPDATE `t` SET `v` = ? WHERE `id` = ?
}
