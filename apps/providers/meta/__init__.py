"""What Instagram, Threads and Facebook Pages share: the Graph client and its error
envelope, the token exchanges and the long-lived login, and container publishing."""
