package acp

// Valid exports valid for the differential fuzz test.
var Valid = valid

// ParserHits returns how many lines p's templates took.
func ParserHits(p *Parser) int { return p.hits }
