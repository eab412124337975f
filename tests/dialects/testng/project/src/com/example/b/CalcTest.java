package com.example.b;

import static org.testng.Assert.assertEquals;

import org.testng.annotations.Test;

/** See com.example.a.CalcTest. */
public class CalcTest {
    @Test
    public void add() {
        assertEquals(1 + 2, 4); // fails here, passes in com.example.a
    }

    @Test
    public void divide() {
        assertEquals(7 / 2, 3);
    }
}
