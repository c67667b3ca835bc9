"""Statistics over scored reports: bootstrap intervals and paired differences, agreement with
human judgements."""
