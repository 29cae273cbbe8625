package temporaldev_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/baton-run/baton/internal/testing/pgtest"
	temporaldev "github.com/baton-run/baton/temporal-dev"
)

// srv is the one in-memory server (with UI) the tests of this binary share.
var srv *temporaldev.Server

// extraAttribute is registered by TestMain beside Baton's.
const extraAttribute = "TestExtra"

func TestMain(m *testing.M) {
	if file := os.Getenv(childEnv); file != "" {
		if err := runChild(file); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	begin := time.Now()
	var err error
	srv, err = temporaldev.Start(ctx, &temporaldev.Options{
		UIPort:           temporaldev.FreePort,
		SearchAttributes: map[string]enums.IndexedValueType{extraAttribute: enums.INDEXED_VALUE_TYPE_BOOL},
	})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the shared server:", err)
		os.Exit(1)
	}
	started := time.Since(begin)
	code := m.Run()
	pgtest.StopShared()
	begin = time.Now()
	if err := srv.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop the shared server:", err)
		code = 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "shared in-memory server with UI: start %s, stop %s\n",
			started.Round(time.Millisecond), time.Since(begin).Round(time.Millisecond))
	}
	os.Exit(code)
}

func greet(_ workflow.Context, name string) (string, error) {
	return "hello " + name, nil
}

// runGreet runs greet to completion on a fresh task queue through a worker
// and returns the workflow's run.
func runGreet(t *testing.T, c client.Client, workflowID string) client.WorkflowRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	queue := "tq-" + t.Name()
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(greet)
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflowID, TaskQueue: queue}, greet, "baton")
	if err != nil {
		t.Fatalf("start workflow: %v", err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if got != "hello baton" {
		t.Fatalf("workflow result = %q, want %q", got, "hello baton")
	}
	return run
}

func newClient(t *testing.T, s *temporaldev.Server) client.Client {
	t.Helper()
	c, err := s.NewClient(context.Background(), client.Options{})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestWorkflowEndToEnd(t *testing.T) {
	t.Parallel()
	runGreet(t, newClient(t, srv), "greet-1")
}

func TestSearchAttributesRegistered(t *testing.T) {
	t.Parallel()
	want := map[string]enums.IndexedValueType{extraAttribute: enums.INDEXED_VALUE_TYPE_BOOL}
	checkSearchAttributes(t, newClient(t, srv), srv.Namespace(), want)
}

func checkSearchAttributes(t *testing.T, c client.Client, ns string, want map[string]enums.IndexedValueType) {
	t.Helper()
	resp, err := c.OperatorService().ListSearchAttributes(context.Background(),
		&operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		t.Fatalf("ListSearchAttributes: %v", err)
	}
	for name, typ := range want {
		if got, ok := resp.GetCustomAttributes()[name]; !ok || got != typ {
			t.Errorf("search attribute %s = %v (registered %v), want %v", name, got, ok, typ)
		}
	}
}

func TestWebUI(t *testing.T) {
	t.Parallel()
	base := srv.UIAddress()
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/") {
		t.Fatalf("UIAddress() = %q, want http://127.0.0.1:<port>/", base)
	}
	if body := get(t, base); !strings.Contains(strings.ToLower(body), "<html") {
		t.Errorf("GET %s: not an HTML page: %.200q", base, body)
	}
	body := get(t, base+"api/v1/namespaces/"+srv.Namespace()+"/search-attributes")
	var attrs struct {
		CustomAttributes map[string]string `json:"customAttributes"`
	}
	if err := json.Unmarshal([]byte(body), &attrs); err != nil {
		t.Fatalf("search attributes from the UI: %v: %.300q", err, body)
	}
	if _, ok := attrs.CustomAttributes[extraAttribute]; !ok {
		t.Errorf("UI lists search attributes %v, want %s among them", attrs.CustomAttributes, extraAttribute)
	}

	// An SRE opens a run.
	run := runGreet(t, newClient(t, srv), "greet-in-ui")
	body = get(t, base+"api/v1/namespaces/"+srv.Namespace()+"/workflows/"+run.GetID())
	if !strings.Contains(body, run.GetRunID()) || !strings.Contains(body, "WORKFLOW_EXECUTION_STATUS_COMPLETED") {
		t.Errorf("the UI's view of workflow %s lacks its run ID or status: %.500q", run.GetID(), body)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %.300q", url, resp.Status, body)
	}
	return string(body)
}

// childEnv names the database file a re-executed test binary runs its
// server on (see TestMain), for TestFileDatabaseSurvivesRestart.
const childEnv = "TEMPORALDEV_TEST_CHILD_DB"

// runChild starts a server on file, runs greet to completion, stops the
// server and prints the workflow's ID and run ID: the part of
// TestFileDatabaseSurvivesRestart that runs in another process.
func runChild(file string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := temporaldev.Start(ctx, &temporaldev.Options{DatabaseFile: file})
	if err != nil {
		return err
	}
	defer s.Stop()
	c, err := s.NewClient(ctx, client.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	w := worker.New(c, "tq-child", worker.Options{})
	w.RegisterWorkflow(greet)
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "greet-before-restart", TaskQueue: "tq-child"}, greet, "baton")
	if err != nil {
		return err
	}
	if err := run.Get(ctx, nil); err != nil {
		return err
	}
	fmt.Println(run.GetID(), run.GetRunID())
	return nil
}

func TestFileDatabaseSurvivesRestart(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "dev.db")
	ctx := context.Background()

	// A first process creates the file, completes a workflow and stops.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+file)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("first process: %v", err)
	}
	ids := strings.Fields(string(out))
	if len(ids) != 2 {
		t.Fatalf("first process printed %q, want a workflow ID and a run ID", out)
	}

	// This process opens the file twice, stopping in between, and asks for
	// one more search attribute and another retention: an existing file
	// ignores the ones given at creation.
	opts := &temporaldev.Options{
		DatabaseFile:     file,
		SearchAttributes: map[string]enums.IndexedValueType{"AfterRestart": enums.INDEXED_VALUE_TYPE_KEYWORD},
		Retention:        48 * time.Hour,
	}
	want := map[string]enums.IndexedValueType{"AfterRestart": enums.INDEXED_VALUE_TYPE_KEYWORD}
	for round := range 2 {
		begin := time.Now()
		s, err := temporaldev.Start(ctx, opts)
		if err != nil {
			t.Fatalf("Start %d on the existing file: %v", round, err)
		}
		t.Logf("start %d on the existing file: %s", round, time.Since(begin).Round(time.Millisecond))
		c, err := s.NewClient(ctx, client.Options{})
		if err != nil {
			t.Fatalf("NewClient: %v", err)
		}
		desc, err := c.DescribeWorkflowExecution(ctx, ids[0], ids[1])
		if err != nil {
			t.Fatalf("describe the workflow after restart %d: %v", round, err)
		}
		if got := desc.GetWorkflowExecutionInfo().GetStatus(); got != enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			t.Errorf("status after restart %d = %v, want COMPLETED", round, got)
		}
		checkSearchAttributes(t, c, s.Namespace(), want)
		ns, err := c.WorkflowService().DescribeNamespace(ctx,
			&workflowservice.DescribeNamespaceRequest{Namespace: s.Namespace()})
		if err != nil {
			t.Fatalf("DescribeNamespace: %v", err)
		}
		if got := ns.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration(); got != 48*time.Hour {
			t.Errorf("retention after restart %d = %s, want 48h", round, got)
		}
		c.Close()
		begin = time.Now()
		if err := s.Stop(); err != nil {
			t.Fatalf("Stop %d: %v", round, err)
		}
		t.Logf("stop %d: %s", round, time.Since(begin).Round(time.Millisecond))
		if err := s.Stop(); err != nil {
			t.Fatalf("second Stop of the same server: %v", err)
		}
	}
}

func TestStartRefuses(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	tests := []struct {
		name string
		opts temporaldev.Options
		want string
	}{
		{"frontend port in use", temporaldev.Options{FrontendPort: busyPort}, "Options.FrontendPort"},
		{"UI port in use", temporaldev.Options{UIPort: busyPort}, "Options.UIPort"},
		{"folder missing", temporaldev.Options{DatabaseFile: filepath.Join(t.TempDir(), "no", "dev.db")}, "does not exist"},
		{"retention too short", temporaldev.Options{Retention: time.Minute}, "Options.Retention"},
		{"bad IP", temporaldev.Options{IP: "localhost"}, "Options.IP"},
		{"bad UI port", temporaldev.Options{UIPort: 70000}, "Options.UIPort"},
		{"too many attributes", temporaldev.Options{SearchAttributes: tooManyInts()}, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := temporaldev.Start(context.Background(), &tt.opts)
			if err == nil {
				_ = s.Stop()
				t.Fatalf("Start succeeded, want an error mentioning %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start error = %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

func tooManyInts() map[string]enums.IndexedValueType {
	m := map[string]enums.IndexedValueType{}
	for i := range 4 {
		m["Int"+strconv.Itoa(i)] = enums.INDEXED_VALUE_TYPE_INT
	}
	return m
}

// TestClientsDoNotCompress checks that the server's clients send their
// gRPC uncompressed unless asked to compress: the SDK's default is gzip,
// which on loopback only costs CPU on every call and every workflow task.
func TestClientsDoNotCompress(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		comp client.GrpcCompression
		want string
	}{
		{"default", nil, ""},
		{"asked for gzip", &client.GrpcCompressionGzip{}, "gzip"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := map[string]int{}
			record := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				comp := ""
				for _, o := range opts {
					if c, ok := o.(grpc.CompressorCallOption); ok {
						comp = c.CompressorType
					}
				}
				mu.Lock()
				calls[comp]++
				mu.Unlock()
				return invoker(ctx, method, req, reply, cc, opts...)
			}
			c, err := srv.NewClient(context.Background(), client.Options{ConnectionOptions: client.ConnectionOptions{
				GrpcCompression: tt.comp,
				DialOptions:     []grpc.DialOption{grpc.WithChainUnaryInterceptor(record)},
			}})
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			defer c.Close()
			runGreet(t, c, "greet-compression-"+strings.ReplaceAll(tt.name, " ", "-"))
			mu.Lock()
			defer mu.Unlock()
			if len(calls) != 1 || calls[tt.want] == 0 {
				t.Fatalf("calls by compressor = %v, want all %q", calls, tt.want)
			}
		})
	}
}
