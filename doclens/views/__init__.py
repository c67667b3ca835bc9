"""What people read: a report's summary tables, HTML pages, leaderboard tables."""
