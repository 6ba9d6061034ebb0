package etcdtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// node is one member of a test etcd cluster, a child process.
type node struct {
	name, client, peer string
	dir                string
	cmd                *exec.Cmd
	done               chan struct{}
	log                *os.File
}

// Cluster is an etcd cluster on loopback with its data in a
// temporary directory.
type Cluster struct {
	nodes   []*node
	initial string
	dir     string
}

// Start starts n members on free loopback ports (data in /dev/shm when
// there is one) and waits until the cluster answers. Stop ends it.
func Start(n int) (*Cluster, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	base := os.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm" // no fsync cost on the shared machine's disk
	}
	dir, err := os.MkdirTemp(base, "proflow-etcd-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	var peers []string
	for i := range n {
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		nd := &node{
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
			c.Stop()
			return nil, err
		}
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		c.Stop()
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
			c.Stop()
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
func (c *Cluster) startNode(nd *node, state string) error {
	if err := os.MkdirAll(nd.dir, 0o700); err != nil {
		return err
	}
	log, err := os.OpenFile(nd.dir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(Bin,
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
		return fmt.Errorf("start %s: %w", Bin, err)
	}
	nd.cmd, nd.log, nd.done = cmd, log, make(chan struct{})
	go func(done chan struct{}) {
		cmd.Wait()
		close(done)
	}(nd.done)
	return nil
}

// Kill ends member i with SIGKILL and waits for it.
func (c *Cluster) Kill(i int) {
	nd := c.nodes[i]
	nd.cmd.Process.Kill()
	<-nd.done
	nd.log.Close()
}

// Restart starts member i again on its data.
func (c *Cluster) Restart(i int) error { return c.startNode(c.nodes[i], "existing") }

// Endpoints returns the members' client URLs.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, nd := range c.nodes {
		eps = append(eps, nd.client)
	}
	return eps
}

// Leader returns the index of the member that leads, or -1.
func (c *Cluster) Leader(ctx context.Context, cli *clientv3.Client) int {
	for i, nd := range c.nodes {
		st, err := cli.Status(ctx, nd.client)
		if err == nil && st.Leader == st.Header.MemberId {
			return i
		}
	}
	return -1
}

// Stop ends every member still running and removes the data.
func (c *Cluster) Stop() {
	for _, nd := range c.nodes {
		if nd.cmd != nil && nd.cmd.ProcessState == nil {
			nd.cmd.Process.Kill()
			<-nd.done
			nd.log.Close()
		}
	}
	os.RemoveAll(c.dir)
}

// Follower returns the index of a member that does not lead, or -1.
func (c *Cluster) Follower(ctx context.Context, cli *clientv3.Client) int {
	for i, nd := range c.nodes {
		st, err := cli.Status(ctx, nd.client)
		if err == nil && st.Leader != st.Header.MemberId {
			return i
		}
	}
	return -1
}

// Size returns the number of members.
func (c *Cluster) Size() int { return len(c.nodes) }

// Name returns member i's name.
func (c *Cluster) Name(i int) string { return c.nodes[i].name }

// Client returns member i's client URL.
func (c *Cluster) Client(i int) string { return c.nodes[i].client }
