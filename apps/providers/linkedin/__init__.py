"""LinkedIn (Posts API): OAuth, member or organization authors, text and image posts.
No threads and no idempotency: a lost answer is a single attempt, settled later only if a
resend is refused as a duplicate that names the existing post."""
