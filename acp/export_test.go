package acp

// Valid exports valid for the differential fuzz test.
var Valid = valid
