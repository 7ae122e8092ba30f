//! Calendar arithmetic shared by the formats' date fields (zip member times, MAT header
//! dates, MATLAB datetimes, numpy datetime64 text). One function does not justify a calendar
//! crate.

/// The proleptic Gregorian `(year, month, day)` of a count of days since 1970-01-01
/// (Howard Hinnant's `civil_from_days`), for any day count numpy's datetime64 can hold.
///
/// ```
/// use sciio_core::calendar::civil_from_days;
/// assert_eq!(civil_from_days(0), (1970, 1, 1));
/// assert_eq!(civil_from_days(19_723), (2024, 1, 1));
/// assert_eq!(civil_from_days(-1), (1969, 12, 31));
/// assert_eq!(civil_from_days(-719_468), (0, 3, 1));
/// ```
pub fn civil_from_days(days: i128) -> (i128, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    // Both within 1..=31 and 1..=12 by construction.
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i128::from(m <= 2);
    (y, m, d)
}
