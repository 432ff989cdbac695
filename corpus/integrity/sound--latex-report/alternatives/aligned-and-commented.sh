#!/bin/bash
# Another layout: the table's columns aligned with spaces, rows indented with a tab, comment
# lines and a trailing comment, two blank lines before the quarter total.
set -euo pipefail
cat > /app/report.tex <<'TEX'
\documentclass[11pt]{article}
\title{Q3 2024 revenue by region}
\author{Finance}
\date{October 2024}
\begin{document}
\maketitle

\section*{Revenue}
Revenue in EUR thousands per region and month, from \texttt{data/q3.csv}.

% figures filled in from data/q3.csv (EUR thousands)
\begin{center}
\begin{tabular}{lrrr}
	\hline
	Region & July & August & September \\
	\hline
	North  &  412 &    398 &       455 \\
	South  &  287 &    301 &       296 \\
	West   &  154 &    170 &       149 \\
	\hline
	Total  &  853 &    869 &       900 \\ % checked: columns add up
	\hline
\end{tabular}
\end{center}


Quarter total: 2622.
\end{document}
TEX
