package main

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// recipes returns the fenced code blocks of docs/ides.md that follow a
// "<!-- recipe: NAME -->" marker, by name.
func recipes(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/ides.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- recipe: ([a-z]+) -->\\s*```[a-z]+\\n(.*?)```")
	out := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// agentServersArgv reads the command line of the one agent in a Zed or
// JetBrains agent_servers JSON document.
func agentServersArgv(t *testing.T, src string) []string {
	var doc struct {
		AgentServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"agent_servers"`
	}
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("recipe is not JSON: %v", err)
	}
	if len(doc.AgentServers) != 1 {
		t.Fatalf("recipe has %d agent servers, want 1", len(doc.AgentServers))
	}
	for _, s := range doc.AgentServers {
		return append([]string{s.Command}, s.Args...)
	}
	return nil
}

// codeCompanionArgv runs a CodeCompanion setup snippet in a real Lua
// interpreter, with require("codecompanion") and
// require("codecompanion.adapters") standing in for the plugin, and
// returns the default command of the one ACP adapter it configures.
func codeCompanionArgv(t *testing.T, src string) []string {
	L := lua.NewState()
	defer L.Close()
	var setup *lua.LTable
	cc := L.NewTable()
	L.SetField(cc, "setup", L.NewFunction(func(L *lua.LState) int { setup = L.CheckTable(1); return 0 }))
	adapters := L.NewTable()
	L.SetField(adapters, "extend", L.NewFunction(func(L *lua.LState) int { L.Push(L.CheckTable(2)); return 1 }))
	L.SetGlobal("require", L.NewFunction(func(L *lua.LState) int {
		switch L.CheckString(1) {
		case "codecompanion":
			L.Push(cc)
		case "codecompanion.adapters":
			L.Push(adapters)
		default:
			L.RaiseError("unexpected require %q", L.CheckString(1))
		}
		return 1
	}))
	if err := L.DoString(src); err != nil {
		t.Fatalf("recipe does not run as Lua: %v", err)
	}
	if setup == nil {
		t.Fatal("recipe never calls setup")
	}
	acp, ok := L.GetField(L.GetField(setup, "adapters"), "acp").(*lua.LTable)
	if !ok {
		t.Fatal("recipe has no adapters.acp table")
	}
	var argv []string
	acp.ForEach(func(_, fn lua.LValue) {
		if err := L.CallByParam(lua.P{Fn: fn, NRet: 1, Protect: true}); err != nil {
			t.Fatalf("adapter function: %v", err)
		}
		adapter := L.Get(-1)
		L.Pop(1)
		def, ok := L.GetField(L.GetField(adapter, "commands"), "default").(*lua.LTable)
		if !ok {
			t.Fatal("adapter has no commands.default list")
		}
		def.ForEach(func(_, v lua.LValue) { argv = append(argv, v.String()) })
	})
	return argv
}

// symbol is an Emacs Lisp symbol read by sexp.
type symbol string

// sexp reads one Emacs Lisp expression from s: a list, a quoted form, a
// string or a symbol. It returns the value ([]any, string or symbol) and
// the rest of s.
func sexp(t *testing.T, s string) (any, string) {
	s = strings.TrimLeft(s, " \t\n")
	switch {
	case s == "":
		t.Fatal("recipe: unexpected end of Lisp")
	case s[0] == '\'':
		v, rest := sexp(t, s[1:])
		return []any{symbol("quote"), v}, rest
	case s[0] == '(':
		var list []any
		s = s[1:]
		for {
			s = strings.TrimLeft(s, " \t\n")
			if strings.HasPrefix(s, ")") {
				return list, s[1:]
			}
			var v any
			v, s = sexp(t, s)
			list = append(list, v)
		}
	case s[0] == '"':
		end := 1
		for ; end < len(s) && s[end] != '"'; end++ {
			if s[end] == '\\' {
				end++
			}
		}
		v, err := strconv.Unquote(s[:end+1])
		if err != nil {
			t.Fatalf("recipe: Lisp string %s: %v", s[:end+1], err)
		}
		return v, s[end+1:]
	}
	end := strings.IndexAny(s, " \t\n()")
	if end < 0 {
		end = len(s)
	}
	return symbol(s[:end]), s[end:]
}

// agentShellArgv reads (setq VAR '("cmd" "arg" ...)) and returns VAR and
// the list.
func agentShellArgv(t *testing.T, src string) (string, []string) {
	v, rest := sexp(t, src)
	if strings.TrimSpace(rest) != "" {
		t.Fatalf("recipe: text after the form: %q", rest)
	}
	form, ok := v.([]any)
	if !ok || len(form) != 3 || form[0] != symbol("setq") {
		t.Fatalf("recipe is not (setq VAR 'LIST): %v", v)
	}
	quoted, ok := form[2].([]any)
	if !ok || len(quoted) != 2 || quoted[0] != symbol("quote") {
		t.Fatalf("recipe value is not a quoted list: %v", form[2])
	}
	list, _ := quoted[1].([]any)
	var argv []string
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			t.Fatalf("recipe list element %v is not a string", x)
		}
		argv = append(argv, s)
	}
	return string(form[1].(symbol)), argv
}

// TestIDERecipes parses each IDE recipe of docs/ides.md as its IDE would
// and checks the command line it yields: acpmux run, flags that acpmux
// run accepts, then -- and the agent's own command.
func TestIDERecipes(t *testing.T) {
	rs := recipes(t)
	tests := []struct {
		name  string
		argv  func(src string) []string
		agent []string
	}{
		{"zed", func(s string) []string { return agentServersArgv(t, s) }, []string{"npx", "@agentclientprotocol/claude-agent-acp"}},
		{"jetbrains", func(s string) []string { return agentServersArgv(t, s) }, []string{"gemini", "--experimental-acp"}},
		{"neovim", func(s string) []string { return codeCompanionArgv(t, s) }, []string{"claude-agent-acp"}},
		{"emacs", func(s string) []string {
			name, argv := agentShellArgv(t, s)
			if name != "agent-shell-anthropic-claude-acp-command" {
				t.Errorf("emacs recipe sets %s", name)
			}
			return argv
		}, []string{"claude-agent-acp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, ok := rs[tt.name]
			if !ok {
				t.Fatalf("docs/ides.md has no recipe %q", tt.name)
			}
			argv := tt.argv(src)
			if len(argv) < 3 || argv[0] != "acpmux" || argv[1] != "run" {
				t.Fatalf("command line %q does not start with acpmux run", argv)
			}
			dash := slices.Index(argv, "--")
			if dash < 0 || !slices.Equal(argv[dash+1:], tt.agent) {
				t.Fatalf("command line %q: want -- %q at the end", argv, tt.agent)
			}
			fs := flag.NewFlagSet("run", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var f relayFlags
			f.register(fs)
			if err := fs.Parse(argv[2:dash]); err != nil || fs.NArg() != 0 {
				t.Fatalf("acpmux run does not accept the flags %q: %v", argv[2:dash], err)
			}
			if err := f.validate(); err != nil {
				t.Fatalf("flags %q: %v", argv[2:dash], err)
			}
		})
	}
}
