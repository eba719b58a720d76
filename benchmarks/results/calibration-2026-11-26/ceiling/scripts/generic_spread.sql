\set k 1
SELECT * FROM cal_gspread WHERE k = :k;
