package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/proflow-sdn/proflow/internal/etcdtest"
)

// etcdBinary is Debian's etcd-server (make etcd-deps installs it).
const etcdBinary = etcdtest.Bin

// etcdNode is one member of a test etcd cluster, a child process.
type etcdNode struct {
	name, client, peer string
	dir                string
	cmd                *exec.Cmd
	done               chan struct{}
	log                *os.File
}

// etcdCluster is a 3-member etcd cluster on loopback with its data in a
// temporary directory.
type etcdCluster struct {
	nodes   []*etcdNode
	initial string
	dir     string
	mu      sync.Mutex
}

// startEtcd starts n members on free loopback ports and waits until the
// cluster answers. It fails the test binary when the binary is missing and
// we are root (make test installs it), and skips otherwise.
func startEtcd(n int) (*etcdCluster, error) {
	if _, err := os.Stat(etcdBinary); err != nil {
		return nil, fmt.Errorf("%s: %w (install Debian's etcd-server: make etcd-deps)", etcdBinary, err)
	}
	base := os.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm" // no fsync cost on the shared machine's disk
	}
	dir, err := os.MkdirTemp(base, "proflow-etcd-")
	if err != nil {
		return nil, err
	}
	c := &etcdCluster{dir: dir}
	var peers []string
	for i := range n {
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		nd := &etcdNode{
			name:   fmt.Sprintf("e%d", i),
			client: fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
			peer:   fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
			dir:    filepath.Join(dir, fmt.Sprintf("e%d", i)),
		}
		c.nodes = append(c.nodes, nd)
		peers = append(peers, nd.name+"="+nd.peer)
	}
	c.initial = strings.Join(peers, ",")
	for _, nd := range c.nodes {
		if err := c.startNode(nd, "new"); err != nil {
			c.stop()
			return nil, err
		}
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		c.stop()
		return nil, err
	}
	defer cli.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cli.Put(ctx, "/health", "ok")
		cancel()
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("etcd cluster did not answer within 30s: %v (logs in %s)", err, dir)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startNode starts nd's process; state is "new" or "existing".
func (c *etcdCluster) startNode(nd *etcdNode, state string) error {
	if err := os.MkdirAll(nd.dir, 0o700); err != nil {
		return err
	}
	log, err := os.OpenFile(nd.dir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(etcdBinary,
		"--name", nd.name, "--data-dir", nd.dir,
		"--listen-client-urls", nd.client, "--advertise-client-urls", nd.client,
		"--listen-peer-urls", nd.peer, "--initial-advertise-peer-urls", nd.peer,
		"--initial-cluster", c.initial, "--initial-cluster-state", state,
		"--initial-cluster-token", filepath.Base(c.dir),
		"--heartbeat-interval", "100", "--election-timeout", "1000",
		"--logger", "zap", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", etcdBinary, err)
	}
	nd.cmd, nd.log, nd.done = cmd, log, make(chan struct{})
	go func(done chan struct{}) {
		cmd.Wait()
		close(done)
	}(nd.done)
	return nil
}

// kill ends member i with SIGKILL and waits for it.
func (c *etcdCluster) kill(i int) {
	nd := c.nodes[i]
	nd.cmd.Process.Kill()
	<-nd.done
	nd.log.Close()
}

// restart starts member i again on its data.
func (c *etcdCluster) restart(i int) error { return c.startNode(c.nodes[i], "existing") }

func (c *etcdCluster) endpoints() []string {
	var eps []string
	for _, nd := range c.nodes {
		eps = append(eps, nd.client)
	}
	return eps
}

// leader returns the index of the member that leads, or -1.
func (c *etcdCluster) leader(ctx context.Context, cli *clientv3.Client) int {
	for i, nd := range c.nodes {
		st, err := cli.Status(ctx, nd.client)
		if err == nil && st.Leader == st.Header.MemberId {
			return i
		}
	}
	return -1
}

func (c *etcdCluster) stop() {
	for _, nd := range c.nodes {
		if nd.cmd != nil && nd.cmd.ProcessState == nil {
			nd.cmd.Process.Kill()
			<-nd.done
			nd.log.Close()
		}
	}
	os.RemoveAll(c.dir)
}

// testEtcd is the package's cluster, started by TestMain.
var testEtcd *etcdCluster

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	// Without etcd and without root (which make etcd-deps needs) the etcd
	// tests skip; etcd present but not starting is a failure.
	var c *etcdCluster
	if missing := etcdtest.Check(); missing == nil || os.Geteuid() == 0 {
		var err error
		if c, err = startEtcd(3); err != nil {
			fmt.Fprintln(os.Stderr, "cluster tests: etcd:", err)
			os.Exit(1)
		}
	} else {
		etcdMissing = missing
	}
	testEtcd = c
	code := m.Run()
	if c != nil {
		c.stop()
	}
	os.Exit(code)
}

// etcdMissing is why TestMain started no etcd: not root and etcd missing.
var etcdMissing error

// etcdOrSkip returns the package's etcd cluster, or skips the test when the
// machine lacks etcd and the root to install it.
func etcdOrSkip(t testing.TB) *etcdCluster {
	t.Helper()
	if testEtcd == nil {
		t.Skipf("skipping: not root and %v", etcdMissing)
	}
	return testEtcd
}

// adminClient returns a plain client of the test cluster.
func adminClient(t testing.TB, c *etcdCluster) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}
