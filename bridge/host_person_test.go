package bridge

import (
	"errors"
	"testing"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm/identity"
	"github.com/acpmux/acpmux/confirm/store"
)

// TestRolesOfHosts: what each role's /acp host may send and whether it is
// asked; a host without a person (stdio) is not limited.
func TestRolesOfHosts(t *testing.T) {
	drive := []string{acp.MethodSessionNew, acp.MethodSessionPrompt, acp.MethodSessionLoad, acp.MethodSessionSetMode, "_vendor/x"}
	for _, tc := range []struct {
		role          store.Role
		person        bool
		answer, drive bool
	}{
		{store.RoleObserver, true, false, false},
		{store.RoleApprover, true, true, false},
		{store.RoleController, true, true, true},
		{store.RoleAdmin, true, true, true},
		{"", false, true, true},
	} {
		opts := HostOptions{}
		if tc.person {
			opts.Person = &identity.Person{Name: "p", Role: tc.role}
		}
		h := NewHost("h", nil, opts)
		if h.mayAnswer() != tc.answer {
			t.Errorf("%q: mayAnswer %v, want %v", tc.role, h.mayAnswer(), tc.answer)
		}
		for _, m := range []string{acp.MethodInitialize, MethodSessionAttach} {
			if err := h.admitMethod(m); err != nil {
				t.Errorf("%q: %s refused: %v", tc.role, m, err)
			}
		}
		for _, m := range drive {
			err := h.admitMethod(m)
			if (err == nil) != tc.drive || (err != nil && !errors.Is(err, acp.ErrForbidden)) {
				t.Errorf("%q: %s: %v, want allowed=%v (else -32094)", tc.role, m, err, tc.drive)
			}
		}
	}
}
