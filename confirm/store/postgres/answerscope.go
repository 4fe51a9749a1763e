package postgres

// migrationAnswerScope records the scope of the winning answer
// ([store.Answer].Scope: ONCE, SESSION, ALWAYS, or "" when none was
// given), so that a retry of the answer is told apart from the same
// option with another scope. Decisions answered before it get "".
const migrationAnswerScope = `ALTER TABLE decisions ADD COLUMN answer_scope TEXT NOT NULL DEFAULT ''`
