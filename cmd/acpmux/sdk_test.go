package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// buildExample builds a package of github.com/coder/acp-go-sdk (v0.13.0,
// from go.mod) into dir and returns the binary's path.
func buildExample(t *testing.T, pkg, dir string) string {
	t.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// recordingClient is an acp.Client that records what it sees and answers
// every permission request with the option at index pick.
type recordingClient struct {
	pick int
	mu   sync.Mutex
	log  []string
}

func (c *recordingClient) add(kind string, v any) {
	b, _ := json.Marshal(v)
	c.mu.Lock()
	c.log = append(c.log, kind+" "+string(b))
	c.mu.Unlock()
}

func (c *recordingClient) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	// acpmux adds its own _meta.acpmux (decision id, warnings); the rest of
	// the request must be what the agent sent.
	if _, ok := p.Meta["acpmux"]; ok {
		c.add("acpmux-meta", true)
		delete(p.Meta, "acpmux")
		if len(p.Meta) == 0 {
			p.Meta = nil
		}
	}
	c.add("permission", p)
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{
		Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: p.Options[c.pick].OptionId}}}, nil
}

func (c *recordingClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.add("update", n)
	return nil
}

func (c *recordingClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, nil
}
func (c *recordingClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, nil
}
func (c *recordingClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{TerminalId: "t1"}, nil
}
func (c *recordingClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, nil
}
func (c *recordingClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, nil
}
func (c *recordingClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, nil
}
func (c *recordingClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, nil
}

// sdkTurn runs initialize, session/new and one prompt turn with the SDK's
// client against argv and returns the transcript the client saw.
func sdkTurn(t *testing.T, pick int, argv ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	client := &recordingClient{pick: pick}
	conn := sdk.NewClientSideConnection(client, stdin, stdout)
	init, err := conn.Initialize(ctx, sdk.InitializeRequest{
		ProtocolVersion:    sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true},
	})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	client.add("initialize", init)
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Hello, agent!")}})
	if err != nil {
		t.Fatalf("session/prompt: %v", err)
	}
	client.add("prompt", resp)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("%v exited: %v", argv, err)
	}
	client.mu.Lock()
	defer client.mu.Unlock()
	// Session ids differ per run; the transcript is compared without them.
	out := append([]string(nil), client.log...)
	for i := range out {
		out[i] = replaceAll(out[i], string(sess.SessionId), "SESSION")
	}
	return out
}

func replaceAll(s, old, new string) string {
	if old == "" {
		return s
	}
	b, _ := json.Marshal(old)
	return string(json.RawMessage([]byte(stringsReplace(s, string(b[1:len(b)-1]), new))))
}

// TestSDKExampleAgentThroughAcpmux drives the acp-go-sdk v0.13.0 example
// agent with the SDK's own client types, once directly and once through
// "acpmux run --", answering its permission request first with "allow"
// then with "reject": each turn completes and the transcripts are equal.
func TestSDKExampleAgentThroughAcpmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the SDK example agent and runs 5 s turns")
	}
	dir := t.TempDir()
	agent := buildExample(t, "github.com/coder/acp-go-sdk/example/agent", dir)
	for _, pick := range []int{0, 1} {
		var direct, relayed []string
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); direct = sdkTurn(t, pick, agent) }()
		go func() { defer wg.Done(); relayed = sdkTurn(t, pick, "acpmux", "run", "--", agent) }()
		wg.Wait()
		if len(direct) < 5 {
			t.Fatalf("direct transcript too short: %q", direct)
		}
		// The SDK client handles notifications on one goroutine and each
		// request on another, so a request may be recorded before or after
		// the notification the agent wrote just before it, with or without
		// acpmux. Each stream is compared in its own order.
		for _, kind := range []string{"initialize", "update", "permission", "prompt"} {
			d, r := only(direct, kind), only(relayed, kind)
			if !reflect.DeepEqual(d, r) {
				t.Errorf("pick %d: %s messages through acpmux differ\ndirect:  %q\nrelayed: %q", pick, kind, d, r)
			}
		}
		if got := relayed[len(relayed)-1]; got != `prompt {"stopReason":"end_turn"}` {
			t.Errorf("pick %d: last entry %s, want an end_turn prompt response", pick, got)
		}
		if n := len(only(relayed, "acpmux-meta")); n != 1 {
			t.Errorf("pick %d: %d permission requests carried _meta.acpmux, want 1", pick, n)
		}
		if perm := len(only(relayed, "permission")); perm != 1 {
			t.Errorf("pick %d: %d permission requests reached the client, want exactly 1", pick, perm)
		}
	}
}

// only returns the transcript entries of one kind, in order.
func only(log []string, kind string) []string {
	var out []string
	for _, l := range log {
		if len(l) > len(kind) && l[:len(kind)+1] == kind+" " {
			out = append(out, l)
		}
	}
	return out
}

// TestSDKExampleClientThroughAcpmux runs the SDK's example client binary as
// "example-client acpmux run -- example-agent", answering its menu with 1.
func TestSDKExampleClientThroughAcpmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the SDK examples and runs a 5 s turn")
	}
	dir := t.TempDir()
	agent := buildExample(t, "github.com/coder/acp-go-sdk/example/agent", dir)
	client := buildExample(t, "github.com/coder/acp-go-sdk/example/client", dir)
	cmd := exec.Command(client, "acpmux", "run", "--", agent)
	cmd.Stdin = stringsReader("1\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("example client: %v\n%s", err, out)
	}
	for _, want := range []string{"Connected to agent", "Permission requested", "Agent completed"} {
		if !contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
