"""Analytics: each published post's public metrics and each account's followers, sampled
over time by read-only jobs, and the pages and API that show them."""
