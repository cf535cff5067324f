// Package kafka adapts Apache Kafka to the pipeline: a local KRaft broker runner (one
// node, or a Cluster of several) for one machine and for tests, and the franz-go producer and consumer that
// implement the pipeline's log ports.
package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/svc-data/svc/infra/localproc"
)

// BrokerConfig describes a local single-node KRaft broker.
type BrokerConfig struct {
	// LibsDir holds the broker's jars (fetched from Maven Central by `go tool task deps`).
	LibsDir string
	// DataDir holds the broker's logs, metadata, config, PID file and output.
	DataDir string
	// Host is the loopback address to listen on. Default 127.0.0.1.
	Host string
	// Port is the client port; 0 picks a free one. The controller uses another free port.
	Port int
	// LinkHost, when set, is a second address the broker serves clients on (port
	// LinkPort; 0 picks a free one), with the same credentials: a client that connects
	// there is told the brokers' addresses there, so a node in another network
	// namespace reaches the broker over a link to this one (the network partition test's
	// veth pair). Empty: loopback only. The brokers talk to each other on loopback.
	LinkHost string
	LinkPort int
	// Java is the java executable. Default "java" from PATH.
	Java string
	// HeapMB is the broker's maximum heap. Default 512.
	HeapMB int
	// Detach keeps the broker running after this process exits (for the test harness);
	// it is then stopped by PID with StopPIDFile.
	Detach bool
	// ReadyTimeout bounds the wait for the broker to answer. Default 60s.
	ReadyTimeout time.Duration
	Logger       *slog.Logger

	// The fields below make the broker one node of a Cluster; zero values are a
	// single-node broker.

	// NodeID is the broker's KRaft node id. Default 1.
	NodeID int
	// ControllerPort is the controller listener's port; 0 picks a free one.
	ControllerPort int
	// Voters is the controller quorum, every node's id and controller port (this one's
	// included); empty is this node alone.
	Voters []Voter
	// ClusterID formats the storage on first start; empty is a random one. Every node of
	// a cluster is formatted with the same.
	ClusterID string
	// Replication is the replication factor of the broker's internal topics and the
	// default of topics created without one (svcd's); min.insync.replicas is 2 from 3
	// replicas on, 1 below. Default 1.
	Replication int
	// SASL are the credentials every listener asks for; empty generates them into
	// DataDir on first start (a Cluster gives all its nodes the same).
	SASL SASL
}

// Voter is one node of a KRaft controller quorum.
type Voter struct {
	ID             int
	ControllerPort int
}

// Validate fills defaults and checks the configuration.
func (c *BrokerConfig) Validate() error {
	if c.LibsDir == "" {
		return errors.New("kafka broker: no jars directory; run `go tool task deps` or set SVC_KAFKA_LIBS")
	}
	jars, _ := filepath.Glob(filepath.Join(c.LibsDir, "kafka_*.jar"))
	if len(jars) == 0 {
		return fmt.Errorf("kafka broker: no kafka jar in %s; run `go tool task deps`", c.LibsDir)
	}
	if c.DataDir == "" {
		return errors.New("kafka broker: no data directory")
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.Java == "" {
		c.Java = "java"
	}
	if c.HeapMB == 0 {
		c.HeapMB = 512
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 60 * time.Second
	}
	if c.NodeID == 0 {
		c.NodeID = 1
	}
	if c.Replication == 0 {
		c.Replication = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Broker is a running local broker.
type Broker struct {
	cfg  BrokerConfig
	proc *localproc.Process
	addr string
	sasl SASL
}

// NewBroker validates cfg and returns a broker ready to Start.
func NewBroker(cfg BrokerConfig) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Broker{cfg: cfg}, nil
}

// Seeds returns the broker's client address once started.
func (b *Broker) Seeds() string { return b.addr }

// Conn is how clients reach the broker once started: its address and its credentials.
func (b *Broker) Conn() Conn { return Conn{Seeds: []string{b.addr}, SASL: b.sasl} }

// CredentialsFile is the file holding the broker's client credentials (mode 0600), for
// a process given the broker's address (SVC_KAFKA_SASL_FILE, KAFKA_SASL_FILE).
func (b *Broker) CredentialsFile() string { return CredentialsFile(b.cfg.DataDir) }

// PID returns the broker's process id once started.
func (b *Broker) PID() int { return b.proc.PID() }

// PIDFile is where a broker in dir records its process id.
func PIDFile(dir string) string { return filepath.Join(dir, "kafka.pid") }

// Start formats the storage on first use, starts the broker and waits until it serves
// clients.
func (b *Broker) Start(ctx context.Context) error {
	if err := b.launch(ctx); err != nil {
		return err
	}
	if err := b.waitReady(ctx); err != nil {
		return errors.Join(err, b.Shutdown(ctx))
	}
	b.cfg.Logger.Info("kafka broker ready", "seeds", b.addr, "node", b.cfg.NodeID)
	return nil
}

// launch formats the storage on first use and starts the broker process, without
// waiting for it: the nodes of a cluster elect a controller only once a majority runs.
func (b *Broker) launch(ctx context.Context) error {
	c := b.cfg
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("kafka broker: %w", err)
	}
	// A directory made before (by hand, or by a tool with a looser umask) is made
	// private too: it holds every tenant's rows.
	if err := os.Chmod(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("kafka broker: %w", err)
	}
	// A broker left over from an earlier run on the same directory is stopped first:
	// two brokers on one log directory would corrupt it.
	if err := StopPIDFile(ctx, c.DataDir); err != nil {
		return err
	}
	port, ctrl := c.Port, c.ControllerPort
	var err error
	if port == 0 {
		if port, err = freePort(c.Host); err != nil {
			return err
		}
	}
	if ctrl == 0 {
		if ctrl, err = freePort(c.Host); err != nil {
			return err
		}
	}
	b.addr = net.JoinHostPort(c.Host, strconv.Itoa(port))
	link := c.LinkPort
	if c.LinkHost != "" && link == 0 {
		if link, err = freePort(c.LinkHost); err != nil {
			return err
		}
	}
	// The broker serves svcd only: every listener asks for the credentials generated into
	// the data directory on first start (see DESIGN.md, "Local surfaces").
	if c.SASL != (SASL{}) {
		b.sasl = c.SASL
	} else if b.sasl, err = brokerCredentials(c.DataDir); err != nil {
		return err
	}
	voters := c.Voters
	if len(voters) == 0 {
		voters = []Voter{{ID: c.NodeID, ControllerPort: ctrl}}
	}
	props := filepath.Join(c.DataDir, "server.properties")
	logDir := filepath.Join(c.DataDir, "log")
	conf := serverProperties(brokerProps{host: c.Host, port: port, ctrl: ctrl, linkHost: c.LinkHost, linkPort: link,
		logDir: logDir, sasl: b.sasl, node: c.NodeID, voters: voters, replication: c.Replication})
	if err := os.WriteFile(props, []byte(conf), 0o600); err != nil {
		return fmt.Errorf("kafka broker: write config: %w", err)
	}
	log4j := filepath.Join(c.DataDir, "log4j2.properties")
	if err := os.WriteFile(log4j, []byte(log4jConfig(filepath.Join(c.DataDir, "broker.log"))), 0o600); err != nil {
		return fmt.Errorf("kafka broker: write log config: %w", err)
	}
	classpath, err := b.classpath()
	if err != nil {
		return err
	}
	java := func(args ...string) *exec.Cmd {
		base := []string{"-Xmx" + strconv.Itoa(c.HeapMB) + "m", "-Xms128m", "-XX:+UseG1GC",
			"-Dlog4j2.configurationFile=" + log4j, "-Dkafka.logs.dir=" + c.DataDir, "-cp", classpath}
		// The broker runs with umask 077, whoever starts it: its segments hold every
		// tenant's rows. exec keeps the shell's pid, so the pid file names java.
		cmd := exec.Command("/bin/sh", append([]string{"-c", `umask 077 && exec "$0" "$@"`, c.Java}, append(base, args...)...)...)
		cmd.Env = localproc.Env()
		return cmd
	}
	if _, err := os.Stat(filepath.Join(logDir, "meta.properties")); err != nil {
		// The id is joined to its flag: an id starting with "-" would otherwise be read as a
		// flag (one start in 64).
		id := c.ClusterID
		if id == "" {
			id = clusterID()
		}
		out, err := java("kafka.tools.StorageTool", "format", "--cluster-id="+id, "-c", props, "--ignore-formatted").CombinedOutput()
		if err != nil {
			return fmt.Errorf("kafka broker: format storage: %w: %s", err, strings.TrimSpace(string(out)))
		}
	}
	outFile, err := os.OpenFile(filepath.Join(c.DataDir, "broker.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("kafka broker: %w", err)
	}
	defer outFile.Close()
	cmd := java("kafka.Kafka", props)
	cmd.Stdout, cmd.Stderr = outFile, outFile
	if b.proc, err = localproc.Start(cmd, PIDFile(c.DataDir), c.Detach); err != nil {
		return fmt.Errorf("kafka broker: start java: %w (is Java 17+ installed?)", err)
	}
	c.Logger.Info("kafka broker starting", "seeds", b.addr, "node", c.NodeID, "pid", b.proc.PID(), "dir", c.DataDir)
	return nil
}

func (b *Broker) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ReadyTimeout)
	defer cancel()
	cl, err := b.Conn().Client()
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		select {
		case <-b.proc.Done():
			return fmt.Errorf("kafka broker exited during start; see %s", filepath.Join(b.cfg.DataDir, "broker.out"))
		default:
		}
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := adm.ApiVersions(rctx)
		rcancel()
		if err == nil {
			// The group coordinator needs the offsets topic; creating a throwaway group
			// read proves the broker is fully up, not just listening.
			if _, err = adm.FetchOffsets(ctx, "svc-ready-probe"); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafka broker at %s not ready after %s: %w; see %s", b.addr, b.cfg.ReadyTimeout, err,
				filepath.Join(b.cfg.DataDir, "broker.log"))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Shutdown stops the broker: SIGTERM, then SIGKILL at ctx's deadline. Safe without Start
// and twice.
func (b *Broker) Shutdown(ctx context.Context) error { return b.proc.Stop(ctx) }

// StopPIDFile stops a broker recorded in dir's PID file, if it still runs.
func StopPIDFile(ctx context.Context, dir string) error {
	return localproc.StopPIDFile(ctx, PIDFile(dir), kafkaMarker)
}

// kafkaMarker is in a broker's command line (PIDs get reused).
const kafkaMarker = "kafka.Kafka"

func (b *Broker) classpath() (string, error) {
	jars, err := filepath.Glob(filepath.Join(b.cfg.LibsDir, "*.jar"))
	if err != nil || len(jars) == 0 {
		return "", fmt.Errorf("kafka broker: no jars in %s", b.cfg.LibsDir)
	}
	sort.Strings(jars)
	return strings.Join(jars, string(os.PathListSeparator)), nil
}

func freePort(host string) (int, error) {
	p, err := localproc.FreePort(host)
	if err != nil {
		return 0, fmt.Errorf("kafka broker: %w", err)
	}
	return p, nil
}

func clusterID() string {
	// KRaft cluster ids are 16 bytes in URL-safe base64 without padding: 22 characters.
	// One starting with '-' would be read as an option by the storage tool (1 in 64).
	for {
		if id := randomClusterID(); id[0] != '-' {
			return id
		}
	}
}

func randomClusterID() string {
	id := uuid.New()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var sb strings.Builder
	var acc, bits uint
	for _, by := range id {
		acc = acc<<8 | uint(by)
		bits += 8
		for bits >= 6 {
			bits -= 6
			sb.WriteByte(alphabet[(acc>>bits)&63])
		}
	}
	if bits > 0 {
		sb.WriteByte(alphabet[(acc<<(6-bits))&63])
	}
	return sb.String()
}

// MaxMessageBytes is the largest record batch the local broker accepts. Ingest requests
// are capped below it so that one request is one record.
const MaxMessageBytes = 64 << 20

// serverProperties is the broker's configuration. Both listeners, the clients' and the
// controller's, ask for SASL PLAIN with the one generated user: a local process without
// the credentials file can neither read nor write a topic, nor reach the controller.
// A cluster's nodes are each broker and controller at once (combined mode), with one
// quorum of all of them. A link listener (LINK) is one more client listener, advertised
// as itself to the clients that connect to it.
type brokerProps struct {
	host        string
	port, ctrl  int
	linkHost    string
	linkPort    int
	logDir      string
	sasl        SASL
	node        int
	voters      []Voter
	replication int
}

func serverProperties(p brokerProps) string {
	s := p.sasl
	jaas := fmt.Sprintf(`org.apache.kafka.common.security.plain.PlainLoginModule required username="%[1]s" password="%[2]s" user_%[1]s="%[2]s";`,
		s.User, s.Password)
	voters := make([]string, len(p.voters))
	for i, v := range p.voters {
		voters[i] = fmt.Sprintf("%d@%s:%d", v.ID, p.host, v.ControllerPort)
	}
	minISR := 1
	if p.replication >= 3 {
		minISR = 2
	}
	client := "SASL_PLAINTEXT://" + net.JoinHostPort(p.host, strconv.Itoa(p.port))
	listeners := client + ",CONTROLLER://" + net.JoinHostPort(p.host, strconv.Itoa(p.ctrl))
	advertised := client
	protocols := "CONTROLLER:SASL_PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT"
	linkJAAS := ""
	if p.linkHost != "" {
		link := ",LINK://" + net.JoinHostPort(p.linkHost, strconv.Itoa(p.linkPort))
		listeners, advertised = listeners+link, advertised+link
		protocols += ",LINK:SASL_PLAINTEXT"
		linkJAAS = "listener.name.link.plain.sasl.jaas.config=" + jaas + "\n"
	}
	return fmt.Sprintf(`# Written by svc; edits are overwritten at the next start.
process.roles=broker,controller
node.id=%[7]d
controller.quorum.voters=%[8]s
listeners=%[11]s
advertised.listeners=%[12]s
controller.listener.names=CONTROLLER
listener.security.protocol.map=%[13]s
inter.broker.listener.name=SASL_PLAINTEXT
sasl.enabled.mechanisms=PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
sasl.mechanism.controller.protocol=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=%[6]s
listener.name.controller.plain.sasl.jaas.config=%[6]s
%[14]slog.dirs=%[4]s
num.partitions=4
auto.create.topics.enable=false
default.replication.factor=%[9]d
min.insync.replicas=%[10]d
offsets.topic.replication.factor=%[9]d
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=%[9]d
transaction.state.log.min.isr=%[10]d
share.coordinator.state.topic.replication.factor=%[9]d
share.coordinator.state.topic.min.isr=%[10]d
group.initial.rebalance.delay.ms=0
message.max.bytes=%[5]d
replica.fetch.max.bytes=%[5]d
offset.metadata.max.bytes=65536
log.retention.hours=168
`, p.host, p.port, p.ctrl, p.logDir, MaxMessageBytes, jaas, p.node, strings.Join(voters, ","), p.replication, minISR,
		listeners, advertised, protocols, linkJAAS)
}

func log4jConfig(file string) string {
	return fmt.Sprintf(`status = warn
appender.file.type = RollingFile
appender.file.name = file
appender.file.fileName = %[1]s
appender.file.filePattern = %[1]s.%%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%%d] %%p %%m (%%c)%%n
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 20MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 3
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = warn
logger.apache.name = org.apache.kafka
logger.apache.level = warn
`, file)
}
