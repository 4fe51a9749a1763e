package question_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm/question"
	"github.com/acpmux/acpmux/internal/leakcheck"
	"github.com/acpmux/acpmux/internal/optional"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// zodSchema returns the zod schema module of @agentclientprotocol/sdk@1.9.0
// under $ACPMUX_NPM_DIR, or skips (fails with ACPMUX_REQUIRE_NPM=1).
func zodSchema(t *testing.T) string {
	dir := os.Getenv("ACPMUX_NPM_DIR")
	mod := filepath.Join(dir, "node_modules/@agentclientprotocol/sdk/dist/schema/zod.gen.js")
	if _, err := os.Stat(mod); err == nil && dir != "" {
		if _, err := exec.LookPath("node"); err == nil {
			return mod
		}
	}
	if os.Getenv("ACPMUX_REQUIRE_NPM") == "1" {
		t.Fatalf("ACPMUX_NPM_DIR=%q has no @agentclientprotocol/sdk@1.9.0 (npm install @agentclientprotocol/sdk@1.9.0)", dir)
	}
	optional.Skip(t, "npm SDK", "set ACPMUX_NPM_DIR to a directory with npm install @agentclientprotocol/sdk@1.9.0 ws")
	return ""
}

// zodCheck parses each line of stdin with zCreateElicitationResponse and
// prints, per line, the parsed value as JSON or "ERR".
const zodCheck = `
import { zCreateElicitationResponse } from %q;
import { readFileSync } from "node:fs";
for (const line of readFileSync(0, "utf8").split("\n").filter(Boolean)) {
  const r = zCreateElicitationResponse.safeParse(JSON.parse(line));
  console.log(r.success ? JSON.stringify(r.data) : "ERR");
}
`

// TestResponseValidatesAgainstTypeScriptSDK: the result acpmux sends the
// agent for accept (form and URL mode), decline and cancel parses with the
// TypeScript SDK's CreateElicitationResponse schema to the same value.
func TestResponseValidatesAgainstTypeScriptSDK(t *testing.T) {
	mod := zodSchema(t)
	form := mustNew(t, formParams(formSchema))
	var lines []string
	for _, tt := range validateTests {
		if tt.response != "" {
			a, err := validate(form, tt.answer)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, string(question.Response(a)))
		}
	}
	url, _ := validate(mustNew(t, urlParams), `{"action":"accept"}`)
	lines = append(lines, string(question.Response(url)))
	// A control: a response the SDK must refuse, so a passing run means
	// the schema was really applied.
	lines = append(lines, `{"action":"accept","content":{"a":{"nested":1}}}`)

	script := filepath.Join(t.TempDir(), "check.mjs")
	os.WriteFile(script, []byte(strings.Replace(zodCheck, "%q", strconvQuote("file://"+mod), 1)), 0o600)
	cmd := exec.Command("node", script)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(got) != len(lines) {
		t.Fatalf("node printed %d lines for %d responses:\n%s", len(got), len(lines), out)
	}
	for i, line := range lines[:len(lines)-1] {
		if got[i] == "ERR" {
			t.Errorf("SDK refuses our response %s", line)
			continue
		}
		if !sameJSON(t, got[i], line) {
			t.Errorf("SDK reads our response %s as %s", line, got[i])
		}
	}
	if got[len(got)-1] != "ERR" {
		t.Errorf("SDK accepted the control %s: the check does not validate", lines[len(lines)-1])
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func sameJSON(t *testing.T, a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		t.Fatalf("not JSON: %s / %s", a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
