package cluster

import (
	"fmt"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/proflow-sdn/proflow/internal/etcdtest"
)

// testEtcd is the package's cluster, started by TestMain.
var testEtcd *etcdtest.Cluster

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	// Without etcd and without root (which make etcd-deps needs) the etcd
	// tests skip; etcd present but not starting is a failure.
	var c *etcdtest.Cluster
	if missing := etcdtest.Check(); missing == nil || os.Geteuid() == 0 {
		var err error
		if c, err = etcdtest.Start(3); err != nil {
			fmt.Fprintln(os.Stderr, "cluster tests: etcd:", err)
			os.Exit(1)
		}
	} else {
		etcdMissing = missing
	}
	testEtcd = c
	code := m.Run()
	if c != nil {
		c.Stop()
	}
	os.Exit(code)
}

// etcdMissing is why TestMain started no etcd: not root and etcd missing.
var etcdMissing error

// etcdOrSkip returns the package's etcd cluster, or skips the test when the
// machine lacks etcd and the root to install it.
func etcdOrSkip(t testing.TB) *etcdtest.Cluster {
	t.Helper()
	if testEtcd == nil {
		t.Skipf("skipping: not root and %v", etcdMissing)
	}
	return testEtcd
}

// adminClient returns a plain client of the test cluster.
func adminClient(t testing.TB, c *etcdtest.Cluster) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}
