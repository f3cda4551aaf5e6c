"""Review: the candidate queue (models propose, curators approve facts) and the rule lifecycle
(reviewers sign off rules)."""
