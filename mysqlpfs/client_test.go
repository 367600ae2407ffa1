package mysqlpfs_test

import (
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/mysqlpfs"
)

// mysqlClient runs Debian's mysql command-line client (mariadb-client)
// against the fixture, as the test account, in batch mode; it skips the
// test when the client is not installed.
func mysqlClient(t *testing.T, f *fixture, password string, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("mysql")
	if err != nil {
		t.Skip("the mysql client is not installed (apt-get install mariadb-client); skipping the test with a real MySQL client")
	}
	host, port, _ := net.SplitHostPort(f.srv.Addr())
	all := append([]string{"--protocol=TCP", "-h", host, "-P", port, "-u", "pfs", "--password=" + password,
		"--batch", "--skip-ssl", "--connect-timeout=5"}, args...)
	out, err := exec.Command(bin, all...).CombinedOutput()
	if err != nil && strings.Contains(string(out), "unknown option") {
		// An older client without --skip-ssl.
		for i, a := range all {
			if a == "--skip-ssl" {
				all = append(all[:i], all[i+1:]...)
				break
			}
		}
		out, err = exec.Command(bin, all...).CombinedOutput()
	}
	return string(out), err
}

func TestMySQLClient(t *testing.T) {
	f := newFixture(t, mysqlpfs.WithSetupChanges(true))
	out, err := mysqlClient(t, f, testPassword, "-e", `SELECT EVENT_NAME, COUNT_STAR FROM performance_schema.events_waits_summary_global_by_event_name WHERE EVENT_NAME LIKE 'wait/synch/mutex/app/%' ORDER BY COUNT_STAR DESC`)
	if err != nil {
		t.Fatalf("mysql: %v\n%s", err, out)
	}
	want := "EVENT_NAME\tCOUNT_STAR\nwait/synch/mutex/app/cache\t3\nwait/synch/mutex/app/queue\t2\n"
	if out != want {
		t.Errorf("mysql printed\n%s\nwant\n%s", out, want)
	}

	// The README's query, and a sys view by its short name with USE.
	out, err = mysqlClient(t, f, testPassword, "-e", "SELECT exec_count FROM sys.statement_analysis LIMIT 5; USE sys; SELECT total FROM waits_global_by_latency WHERE events = 'wait/synch/mutex/app/cache'")
	if err != nil {
		t.Fatalf("mysql: %v\n%s", err, out)
	}
	if want := "exec_count\n2\ntotal\n3\n"; out != want {
		t.Errorf("mysql printed\n%s\nwant\n%s", out, want)
	}

	// A change, and a refusal with its number.
	out, err = mysqlClient(t, f, testPassword, "-e", "UPDATE performance_schema.setup_consumers SET ENABLED = 'NO' WHERE NAME = 'events_waits_history_long'; SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'events_waits_history_long'")
	if err != nil || out != "ENABLED\nNO\n" {
		t.Errorf("UPDATE then SELECT: %v\n%s", err, out)
	}
	out, err = mysqlClient(t, f, testPassword, "-e", "UPDATE performance_schema.threads SET NAME = 'x'")
	if err == nil || !strings.Contains(out, "ERROR 1683") {
		t.Errorf("UPDATE of threads.NAME: %v\n%s", err, out)
	}
	out, err = mysqlClient(t, f, "wrong", "-e", "SELECT 1")
	if err == nil || !strings.Contains(out, "ERROR 1045") {
		t.Errorf("a wrong password: %v\n%s", err, out)
	}
	out, err = mysqlClient(t, f, testPassword, "-e", "SELECT * FROM performance_schema.nothing_here")
	if err == nil || !strings.Contains(out, "ERROR 1146") {
		t.Errorf("an unknown table: %v\n%s", err, out)
	}
}
