"""Who may act: users, their roles and API tokens (visibility of sources comes with the server)."""
