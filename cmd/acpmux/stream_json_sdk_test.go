package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/acp/acptest"
	"github.com/acpmux/acpmux/internal/optional"
)

// sdkDriver is a Node script that runs an SDK's query() with a string
// prompt and a canUseTool callback against acpmux as the SDK's CLI
// (pathToClaudeCodeExecutable / pathToQwenExecutable point at the acpmux
// binary itself; the agent comes from ACPMUX_AGENT). It prints one JSON
// line per callback call ({"canUseTool", "input", "options"}) and per
// yielded message ({"message"}). argv: claude|qwen allow|deny.
const sdkDriver = `import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
const [,, which, answer] = process.argv;
const req = createRequire(path.join(process.env.NPM_DIR, 'package.json'));
const sdk = await import(pathToFileURL(req.resolve(which === 'claude' ? '@anthropic-ai/claude-agent-sdk' : '@qwen-code/sdk')).href);
const canUseTool = async (tool, input, o) => {
  const { signal, ...rest } = o ?? {};
  console.log(JSON.stringify({ canUseTool: tool, input, options: rest }));
  return answer === 'deny' ? { behavior: 'deny', message: 'not this one' } : { behavior: 'allow', updatedInput: input };
};
const options = which === 'claude'
  ? { pathToClaudeCodeExecutable: process.env.ACPMUX_BIN, canUseTool }
  : { pathToQwenExecutable: process.env.ACPMUX_BIN, canUseTool };
setTimeout(() => { console.log(JSON.stringify({ timeout: true })); process.exit(3); }, 60000);
try {
  for await (const m of sdk.query({ prompt: 'hello', options })) console.log(JSON.stringify({ message: m }));
} catch (e) { console.log(JSON.stringify({ error: String(e) })); process.exit(4); }
process.exit(0);
`

// sdkNPMDir returns $ACPMUX_NPM_DIR when it holds both stream-json SDKs
// (npm install @anthropic-ai/claude-agent-sdk@0.3.332 @qwen-code/sdk@0.1.7,
// as .ci/run does) and node is on PATH, or skips.
func sdkNPMDir(t *testing.T) string {
	dir := os.Getenv("ACPMUX_NPM_DIR")
	ok := dir != ""
	for _, p := range []string{"@anthropic-ai/claude-agent-sdk/sdk.mjs", "@qwen-code/sdk/dist/index.mjs"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p)); err != nil {
			ok = false
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		ok = false
	}
	if ok {
		return dir
	}
	if os.Getenv("ACPMUX_REQUIRE_NPM") == "1" {
		t.Fatalf("ACPMUX_NPM_DIR=%q lacks the stream-json SDKs (npm install @anthropic-ai/claude-agent-sdk@0.3.332 @qwen-code/sdk@0.1.7)", dir)
	}
	optional.Skip(t, "npm SDK", "set ACPMUX_NPM_DIR to a directory with npm install @anthropic-ai/claude-agent-sdk@0.3.332 @qwen-code/sdk@0.1.7")
	return ""
}

// sdkOutput is what the driver printed.
type sdkOutput struct {
	asks     []map[string]any // canUseTool calls
	messages []map[string]any
	raw      string
}

// runSDK runs the driver for sdk (claude or qwen) answering answer, with
// agent (a shell-quoted command) behind acpmux.
func runSDK(t *testing.T, npm, which, answer, agent string, env ...string) sdkOutput {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "driver.mjs")
	os.WriteFile(script, []byte(sdkDriver), 0o600)
	bin, err := exec.LookPath("acpmux")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, which, answer)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NPM_DIR="+npm, "ACPMUX_BIN="+bin, "ACPMUX_AGENT="+agent,
		"XDG_STATE_HOME="+filepath.Join(dir, "state")), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	o := sdkOutput{raw: string(out)}
	if err != nil {
		t.Fatalf("%s SDK driver: %v\nstdout:\n%s\nstderr:\n%s", which, err, out, stderr.String())
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if _, ok := line["canUseTool"]; ok {
			o.asks = append(o.asks, line)
		} else if m, ok := line["message"].(map[string]any); ok {
			o.messages = append(o.messages, m)
		}
	}
	return o
}

// text returns the text of every assistant message and tool result.
func (o sdkOutput) text() string {
	b, _ := json.Marshal(o.messages)
	return string(b)
}

// TestStreamJSONSDKsDriveTheExampleAgent runs the real Claude Agent SDK
// and Qwen Code SDK (query() with canUseTool, acpmux as their CLI) in
// front of github.com/coder/acp-go-sdk's example agent, which asks
// permission for an edit without any model: the callback is called with
// the tool call's input; allow lets the agent apply the change, deny does
// not; the turn ends with a result.
func TestStreamJSONSDKsDriveTheExampleAgent(t *testing.T) {
	npm := sdkNPMDir(t)
	agent := buildExample(t, "github.com/coder/acp-go-sdk/example/agent", t.TempDir())
	for _, which := range []string{"claude", "qwen"} {
		for _, answer := range []string{"allow", "deny"} {
			t.Run(which+"/"+answer, func(t *testing.T) {
				t.Parallel()
				o := runSDK(t, npm, which, answer, agent)
				if len(o.asks) != 1 {
					t.Fatalf("canUseTool called %d times, want 1:\n%s", len(o.asks), o.raw)
				}
				in, _ := json.Marshal(o.asks[0]["input"])
				if !strings.Contains(string(in), "/home/user/project/config.json") {
					t.Errorf("canUseTool input %s, want the tool call's rawInput", in)
				}
				applied := strings.Contains(o.text(), "successfully updated the configuration")
				skipped := strings.Contains(o.text(), "skip the configuration update")
				if answer == "allow" && (!applied || skipped) || answer == "deny" && (applied || !skipped) {
					t.Errorf("%s: applied=%v skipped=%v:\n%s", answer, applied, skipped, o.raw)
				}
				last := o.messages[len(o.messages)-1]
				if last["type"] != "result" || last["subtype"] != "success" {
					t.Errorf("last message %v, want a success result", last)
				}
			})
		}
	}
}

// TestStreamJSONSDKsSeeWarnings: the canUseTool callback of each SDK sees
// acpmux's warning for a shell command it cannot classify (the scripted
// agent asks to run "make deploy"): the Claude SDK in decisionReason and
// description, the Qwen SDK in its suggestions' descriptions.
func TestStreamJSONSDKsSeeWarnings(t *testing.T) {
	npm := sdkNPMDir(t)
	self, _ := filepath.Abs(os.Args[0])
	scriptFile := filepath.Join(t.TempDir(), "agent.script")
	os.WriteFile(scriptFile, []byte(`recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1,"agentCapabilities":{}}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"call_1","title":"make deploy","kind":"execute","status":"pending","rawInput":{"command":"make deploy"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
send {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}
waiteof
`), 0o600)
	for _, which := range []string{"claude", "qwen"} {
		t.Run(which, func(t *testing.T) {
			t.Parallel()
			o := runSDK(t, npm, which, "deny", shellQuote(self), acptest.EnvScript+"=@"+scriptFile)
			if len(o.asks) != 1 {
				t.Fatalf("canUseTool called %d times, want 1:\n%s", len(o.asks), o.raw)
			}
			opts, _ := json.Marshal(o.asks[0]["options"])
			if !strings.Contains(string(opts), "acpmux could not determine whether this shell command is read-only") {
				t.Errorf("canUseTool options %s: no acpmux warning", opts)
			}
			if tool := o.asks[0]["canUseTool"]; which == "claude" && tool != "Bash" || which == "qwen" && tool != "run_shell_command" {
				t.Errorf("tool name %v", tool)
			}
		})
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
